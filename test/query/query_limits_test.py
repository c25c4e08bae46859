#!/usr/bin/env python3
"""`aiprof query`'s limits through the CLI (trial_limits, session 46): the
text table's size and the SQL text's length.

The text table pads each column to its widest value (up to 240
characters), so a table of many columns, one wide value in each, was many
times what --max-result counts for the rows: 1,990 columns of NULL under one
240-character row, 10,000 rows (every default) held 0.8 GB of rows, wrote
4.8 GB of text and peaked at 9.1 GB RSS. The text is now held to
--max-result too: past it, an error naming the limit, exit 1, nothing on
standard output; CSV and JSON of the same rows are not padded and pass.

  query_limits_test.py --aiprof build/aiprof --data test/data
"""
import argparse
import os
import subprocess
import sys

FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def wide_sql(columns, rows):
    """`columns` columns of NULL, under one first row of 240-character values."""
    cols = ", ".join("x AS c%d" % i for i in range(columns))
    return ("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT %d), "
            "v(x) AS (SELECT CASE WHEN n = 1 THEN printf('%%240s', 'w') END FROM r) SELECT %s FROM v" % (rows, cols))


def query(aiprof, trace, sql, *flags):
    return subprocess.run([aiprof, "query", trace, sql, *flags], capture_output=True, timeout=300)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    args = ap.parse_args()
    trace = os.path.join(args.data, "convnet_bs8_channels_last.kineto.json")

    # 100 columns x 200 rows: 0.8 MB held (40 bytes a cell), 4.8 MB of text.
    sql = wide_sql(100, 200)
    p = query(args.aiprof, trace, sql, "--max-result", "1")
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1, "text over --max-result: exit 1 (got %d, %d bytes out)" % (p.returncode, len(p.stdout)))
    check("text table passed its size limit" in err and "--max-result raises it" in err and "csv or json" in err,
          "the error names the limit, the flag and what to do: %s" % err.strip()[:300])
    check(p.stdout == b"", "nothing on standard output")
    for fmt in ("csv", "json"):
        p = query(args.aiprof, trace, sql, "--max-result", "1", "--format", fmt)
        check(p.returncode == 0 and len(p.stdout) < (1 << 20),
              "the same rows as %s fit the limit: exit %d, %d bytes" % (fmt, p.returncode, len(p.stdout)))
    p = query(args.aiprof, trace, sql)
    check(p.returncode == 0 and len(p.stdout) > 4_000_000 and p.stdout.endswith(b"(200 rows)\n"),
          "under the default limit the text table is written whole: exit %d, %d bytes" % (p.returncode, len(p.stdout)))
    # The same limit in the shell's path: standard input that is not a terminal runs as one query.
    p = subprocess.run([args.aiprof, "query", trace, "--max-result", "1"], input=sql.encode(), capture_output=True,
                       timeout=300)
    check(p.returncode == 1 and b"text table passed its size limit" in p.stderr,
          "from standard input too: exit %d" % p.returncode)

    # SQL text: SQLite compiles a statement outside the time limit, and one
    # CASE of N branches takes time growing as N^2 (800,000 WHENs, 19 MB:
    # still compiling after 10 minutes under --timeout 5s). Past 1 MiB the
    # SQL is refused before SQLite sees it; a comment makes it long here,
    # so the old code's answer would come at once too.
    long_sql = "SELECT 7 AS seven -- " + "x" * (1 << 20)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), "aiprof_query_limits_%d.sql" % os.getpid())
    try:
        with open(path, "w") as f:
            f.write(long_sql)
        p = subprocess.run([args.aiprof, "query", trace, "--file", path], capture_output=True, timeout=300)
    finally:
        os.unlink(path)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 1 and ("the SQL is %d bytes, over the 1024 KiB" % len(long_sql)) in err and p.stdout == b"",
          "SQL over 1 MiB: exit 1, refused naming its size and the limit (exit %d): %s" % (p.returncode, err.strip()[:300]))
    p = subprocess.run([args.aiprof, "query", trace], input=long_sql[: 1 << 20].encode(), capture_output=True,
                       timeout=300)
    check(p.returncode == 0 and b"seven" in p.stdout, "SQL of 1 MiB runs (from standard input): exit %d %s" %
          (p.returncode, p.stderr.decode(errors="replace").strip()[:200]))

    if FAILURES:
        print("%d failed" % len(FAILURES))
        return 1
    print("all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
