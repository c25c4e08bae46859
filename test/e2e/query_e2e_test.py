#!/usr/bin/env python3
"""aiprof query end to end: on real fixtures, SQL over the tables gives the
counts and sums `aiprof summary --format json` reports (computed by separate
code over the same model); the CLI refuses writes and extension loading,
reports its row and time limits, escapes cells, and reads --file and
standard input. With --python-path, Trace.sql() agrees with the CLI."""
import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

FAILURES = []
CHECKS = [0]

FIXTURES = [
    "test/data/convnet_bs8_channels_last.kineto.json",
    "test/data/alexnet_a100_kineto.json.gz",
    "test/data/resnet50_num_workers_0.pt.trace.json.gz",
    "kineto/HolisticTraceAnalysis__tests__data__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz",
    "kineto/HolisticTraceAnalysis__tests__data__amd_trace__mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "nsys/perlmutter-cloverleaf-cuda.sqlite",
    "ascend-pt/level1",
]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(aiprof, *args, stdin=None):
    p = subprocess.run([aiprof, *args], capture_output=True, timeout=300, input=stdin)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def query_json(aiprof, path, sql):
    rc, out, err = run(aiprof, "query", path, sql, "--format", "json", "--max-rows", "0")
    check(rc == 0, "%s: query %r exits 0 (%s)" % (path, sql, err.strip()))
    if rc != 0:
        return []
    doc = json.loads(out)
    check(not doc["truncated"], "%s: %r not truncated" % (path, sql))
    return doc["rows"]


def compare_with_summary(aiprof, path):
    rc, out, err = run(aiprof, "summary", path, "--format", "json", "--top", "0")
    check(rc == 0, "%s: summary exits 0 (%s)" % (path, err.strip()))
    if rc != 0:
        return
    summary = json.loads(out)
    totals = summary["totals"]
    counts = query_json(aiprof, path,
                        "SELECT (SELECT count(*) FROM slices), (SELECT count(*) FROM instants), "
                        "(SELECT count(*) FROM counters), (SELECT count(*) FROM flows), "
                        "(SELECT count(*) FROM tracks), (SELECT count(*) FROM ops)")[0]
    check(counts == [totals["slices"], totals["instants"], totals["counter_samples"], totals["flows"],
                     totals["tracks"], totals["ops"]],
          "%s: table counts %s match summary totals %s" % (path, counts, totals))
    ops = {(r[0] or "", r[1] or ""): (r[2], r[3])
           for r in query_json(aiprof, path, "SELECT category, name, count, total_ns FROM ops")}
    check(len(ops) == len(summary["ops"]), "%s: %d ops vs %d in summary" % (path, len(ops), len(summary["ops"])))
    bad = 0
    for op in summary["ops"]:
        got = ops.get((op["category"], op["name"]))
        if got is None or got[0] != op["count"] or abs(got[1] / 1000.0 - op["total_us"]) > 0.0015:
            bad += 1
            if bad <= 3:
                print("  op %r/%r: query %s, summary count %s total_us %s" %
                      (op["category"], op["name"], got, op["count"], op["total_us"]))
    check(bad == 0, "%s: %d ops differ from summary" % (path, bad))
    # slices.self_ns is summary's self time (D3 of the query/MCP trial: self
    # time from a parent that did not enclose its child went negative), and
    # every parent encloses its child; partial overlaps are a diagnostic.
    selfs = {(r[0] or "", r[1] or ""): r[2] for r in query_json(
        aiprof, path, "SELECT category, name, sum(self_ns) FROM slices GROUP BY category, name")}
    bad = [op["name"] for op in summary["ops"]
           if "self_us" in op and abs(selfs.get((op["category"], op["name"]), -1) / 1000.0 - op["self_us"]) > 0.0015]
    check(not bad, "%s: self_ns per op differs from summary's self_us: %s" % (path, bad[:3]))
    rows = query_json(aiprof, path, "SELECT ts, ts + dur, parent, self_ns FROM slices ORDER BY id")
    outside = sum(1 for r in rows if r[2] is not None and (r[0] < rows[r[2]][0] or r[1] > rows[r[2]][1]))
    negative = sum(1 for r in rows if r[3] < 0)
    check(outside == 0 and negative == 0, "%s: parents enclose their children (%d do not), no negative self "
                                          "time (%d)" % (path, outside, negative))
    by_category = {(r[0] or ""): r[1] for r in query_json(
        aiprof, path, "SELECT category, count(*) FROM (SELECT category FROM slices UNION ALL "
                      "SELECT category FROM instants) GROUP BY category")}
    check(by_category == summary["events_by_category"],
          "%s: events by category match summary" % path)
    # Device span: first start to last end of device activity, per (rank, device).
    spans = {(r[0], r[1]): r[2] for r in query_json(
        aiprof, path, "SELECT rank, device, last_end - first_ts FROM devices WHERE activities > 0")}
    for dev in summary["devices"]:
        got = spans.get((dev["rank"], dev["device"]))
        check(got is not None and abs(got / 1000.0 - dev["span_us"]) <= 0.0015,
              "%s: device %s/%s span %s ns vs summary %s us" % (path, dev["rank"], dev["device"], got, dev["span_us"]))
    check(len(spans) == len(summary["devices"]), "%s: %d devices vs %d" % (path, len(spans), len(summary["devices"])))
    # A time window answered by pushdown equals the same window scanned.
    lo_hi = query_json(aiprof, path, "SELECT min(ts), max(ts) FROM slices")[0]
    if lo_hi[0] is not None:
        lo = lo_hi[0] + (lo_hi[1] - lo_hi[0]) // 3
        hi = lo_hi[0] + 2 * (lo_hi[1] - lo_hi[0]) // 3
        pushed = query_json(aiprof, path, "SELECT count(*), total(dur) FROM slices WHERE ts BETWEEN %d AND %d" % (lo, hi))
        scanned = query_json(aiprof, path, "SELECT count(*), total(dur) FROM slices WHERE ts + 0 BETWEEN %d AND %d" % (lo, hi))
        check(pushed == scanned, "%s: window %s (pushdown) == %s (scan)" % (path, pushed, scanned))
    # Every kernel's stream is known: tids written as text ("stream 7", the
    # tb_plugin traces) give their number, as numeric ones do.
    unknown = query_json(aiprof, path, "SELECT count(*) FROM kernels WHERE stream < 0")[0][0]
    check(unknown == 0, "%s: %d kernels with no stream" % (path, unknown))
    # The launches view holds device activity only (no Kineto "Stream Sync"
    # flows), and analyze's launch delay is its median over runtime calls
    # that launched kernels or collectives, each call's first (docs/query.md;
    # Ascend links each task to its torch op too, by an async_npu flow).
    kinds = {r[0] for r in query_json(aiprof, path, "SELECT DISTINCT activity_kind FROM launches")}
    check(kinds <= {"kernel", "memcpy", "memset", "collective"}, "%s: launches are device activity: %s" % (path, kinds))
    delays = [r[0] for r in query_json(aiprof, path,
                                       "SELECT min(activity_ts) - (launch_ts + launch_dur) FROM launches "
                                       "WHERE launch_kind = 'runtime' AND activity_kind IN ('kernel', 'collective') "
                                       "GROUP BY launch")]
    # Calls whose work started 100 us or more after they returned were held
    # by the device (kMinLaunchHoldNs): not in the launch delay.
    delays = [d for d in delays if d < 100000]
    if delays:
        rc, out, err = run(aiprof, "analyze", path, "--only", "launches", "--format", "json")
        found = re.search(r'"launch_delay_p50_ns": \{[^}]*"value": ([-0-9.e+]+)', out) if rc == 0 else None
        p50 = float(found.group(1)) if found else None
        check(p50 is not None and abs(p50 - statistics.median(delays)) <= 1,
              "%s: analyze's launch delay p50 %s = the launches view's median %s over %d calls not held"
              % (path, p50, statistics.median(delays), len(delays)))
    # The steps summary lists come from the timeline's step table.
    if summary.get("step_source") in ("timeline", "periodic pattern"):
        steps = query_json(aiprof, path, "SELECT count(*) FROM steps")[0][0]
        check(steps == len(summary["steps"]), "%s: %d steps vs %d" % (path, steps, len(summary["steps"])))


def safety(aiprof, path, tmp):
    for sql in ["DELETE FROM slices", "CREATE TABLE t(x)", "ATTACH DATABASE '%s/x.db' AS x" % tmp,
                "SELECT load_extension('/nonexistent.so')", "PRAGMA writable_schema=1"]:
        rc, out, err = run(aiprof, "query", path, sql)
        refused = "not authorized" in err or "may not be modified" in err
        check(rc == 1 and refused and "query (command line)" in err,
              "refused with exit 1: %r -> %d %r" % (sql, rc, err.strip()))
    check(not os.path.exists(os.path.join(tmp, "x.db")), "ATTACH created no file")
    rc, out, err = run(aiprof, "query", path, "SELECT id FROM slices", "--max-rows", "3")
    check(rc == 0 and out.count("\n") == 6 and "--max-rows 3" in out, "text row limit reported: %r" % out)
    rc, out, err = run(aiprof, "query", path, "SELECT id FROM slices", "--max-rows", "3", "--format", "csv")
    check(rc == 0 and len(out.splitlines()) == 4 and "--max-rows 3" in err, "csv row limit on stderr: %r" % err)
    rc, out, err = run(aiprof, "query", path,
                       "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c",
                       "--timeout", "0.5")
    check(rc == 1 and "time limit" in err, "timeout reported: %d %r" % (rc, err.strip()))
    rc, out, err = run(aiprof, "query", path, "SELEC 1")
    check(rc == 1 and "syntax error" in err and "query (command line):1:" in err, "syntax error named: %r" % err)
    q = os.path.join(tmp, "q.sql")
    with open(q, "w") as f:
        f.write("-- count\nSELECT count(*) AS n FROM slices;\n")
    rc, out, err = run(aiprof, "query", path, "--file", q, "--format", "csv")
    rc2, out2, _ = run(aiprof, "query", path, "--format", "csv", stdin=b"SELECT count(*) AS n FROM slices")
    check(rc == 0 and rc2 == 0 and out == out2 and out.startswith("n\r\n"), "--file and stdin agree: %r %r" % (out, out2))
    with open(q, "w") as f:
        f.write("SELECT 1;\nSELECT nope FROM slices;\n")
    rc, out, err = run(aiprof, "query", path, "--file", q)
    check(rc == 1 and ("query %s:2:" % q) in err and "no such column" in err, "error names the file: %r" % err)
    rc, out, err = run(aiprof, "query", path, "--schema")
    check(rc == 0 and "slices:" in out and "device_gaps:" in out, "--schema lists tables and views")
    rc, out, err = run(aiprof, "query", os.path.join(tmp, "missing.json"), "SELECT 1")
    check(rc == 1 and "missing.json" in err, "missing input named: %r" % err)


def shell(aiprof, path):
    """The interactive shell on a pseudo-terminal: a statement over two lines, an error, .quit."""
    import pty
    import select
    import time
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(aiprof, [aiprof, "query", path])
    os.write(fd, b"SELECT count(*) AS n\n FROM slices;\nSELECT nope FROM slices;\n.quit\n")
    out = b""
    deadline = time.time() + 60
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    text = out.decode("utf-8", "replace")
    expected = query_json(aiprof, path, "SELECT count(*) FROM slices")[0][0]
    check(os.WEXITSTATUS(status) == 0, "shell exits 0 after .quit")
    check("aiprof> " in text and "   ...> " in text, "shell prompts: %r" % text[-400:])
    check((" %d\r\n" % expected) in text or ("\n%d\r\n" % expected) in text, "shell prints the count: %r" % text[-400:])
    check("query (shell):1:8: no such column: nope" in text, "shell reports an error and goes on: %r" % text[-400:])


def escaping(aiprof, tmp):
    trace = {"traceEvents": [
        {"ph": "X", "name": "=HYPERLINK(\"http://x\")\u001b[2J", "cat": "cpu_op", "ts": 1, "dur": 5, "pid": 1, "tid": 1},
    ]}
    path = os.path.join(tmp, "evil.json")
    with open(path, "w") as f:
        json.dump(trace, f)
    rc, out, err = run(aiprof, "query", path, "SELECT name FROM slices")
    check(rc == 0 and "\x1b" not in out and "\\x1b[2J" in out, "text escapes control characters: %r" % out)
    rc, out, err = run(aiprof, "query", path, "SELECT name FROM slices", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    check(rc == 0 and rows[1][0].startswith("'="), "csv defuses formulas: %r" % rows)
    check("\x1b" not in out and rows[1][0].endswith("\\x1b[2J"), "csv shows the ESC as text: %r" % out)
    rc, out, err = run(aiprof, "query", path, "SELECT name FROM slices", "--format", "json")
    check(rc == 0 and json.loads(out)["rows"][0][0].endswith("\u001b[2J") and "\x1b" not in out,
          "json escapes and round-trips: %r" % out)


def csv_round_trip(aiprof, path):
    """CSV keeps line breaks and tabs (D8 of the serve trial: a CR was
    written as the text \\x0d, the same as the four characters, and
    backslashes were not escaped): a CSV reader gets such values back. Other
    terminal controls are shown as text, as every aiprof CSV shows them
    (review 26, finding 2; `shown` is what the reader gets). Formulas, also
    after leading blanks or line breaks, are defused with a leading '."""
    values = ["lit\\x0d", "cr\r", "lf\nx", "crlf\r\n", "tab\tx", "esc\x1b[2J", "back\\slash", "nul\x00x",
              "del\x7f", "rtl\u202egpj.json", "c1\x9b", "q\"uote,comma", "caf\u00e9", " lead", "trail "]
    shown = {"esc\x1b[2J": "esc\\x1b[2J", "nul\x00x": "nul\\x00x", "del\x7f": "del\\x7f",
             "rtl\u202egpj.json": "rtl\\u202egpj.json", "c1\x9b": "c1\\u009b"}
    formulas = ["-", "=1+1", "\n=1+1", "  =1+1", "\r\n@SUM(A1)", "\t+1", "\rx", " \t-2"]
    exprs = ["char(%s) AS c%d" % (",".join(str(ord(ch)) for ch in v), i) for i, v in enumerate(values + formulas)]
    p = subprocess.run([aiprof, "query", path, "SELECT " + ", ".join(exprs), "--format", "csv"], capture_output=True,
                       timeout=300)
    check(p.returncode == 0, "csv round trip: exit 0 (%r)" % p.stderr)
    rows = list(csv.reader(io.StringIO(p.stdout.decode("utf-8"), newline="")))
    check(len(rows) == 2, "csv round trip: one header and one row: %r" % rows)
    if len(rows) != 2:
        return
    got = rows[1]
    check(got[:len(values)] == [shown.get(v, v) for v in values],
          "csv values read back, terminal controls as text: %r" % got[:len(values)])
    check(b"\x1b" not in p.stdout and b"\x9b" not in p.stdout and b"\x7f" not in p.stdout,
          "csv has no raw ESC, CSI or DEL: %r" % p.stdout[:300])
    check(got[len(values):] == ["'" + v for v in formulas], "csv formulas defused: %r" % got[len(values):])


def python_agrees(aiprof, path, python_path):
    sys.path.insert(0, python_path)
    import aiprof as ap  # noqa: E402
    t = ap.load(path)
    sql = "SELECT kind, count(*) AS n, sum(dur) AS total FROM slices GROUP BY kind ORDER BY kind"
    frame = t.sql(sql)
    cli = query_json(aiprof, path, sql)
    check([list(r) for r in zip(frame["kind"].tolist(), frame["n"].tolist(), frame["total"].tolist())] == cli,
          "Trace.sql() agrees with the CLI: %s vs %s" % (frame, cli))
    check(str(frame["n"].dtype) == "int64", "integer columns are int64")
    plain = t.sql("SELECT name, parent FROM slices ORDER BY id LIMIT 5", as_frame=False)
    check(plain["name"].dtype == object and plain["parent"].dtype.kind == "f", "NULLs make a float column")
    try:
        t.sql("DELETE FROM slices")
        check(False, "Trace.sql refuses writes")
    except ap.Error as e:
        check("may not be modified" in str(e) or "not authorized" in str(e), "Trace.sql error names the cause: %s" % e)
    try:
        t.sql("SELECT id FROM slices", max_rows=2)
        check(False, "Trace.sql raises past max_rows")
    except ap.Error as e:
        check("max_rows=2" in str(e), "max_rows named: %s" % e)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--python-path", default="")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="aiprof_query_")
    for rel in FIXTURES:
        path = os.path.join(a.source, rel) if rel.startswith("test/") else os.path.join(a.fixtures, rel)
        if not os.path.exists(path):
            check(False, "fixture missing: " + path)
            continue
        compare_with_summary(a.aiprof, path)
    sample = os.path.join(a.source, FIXTURES[0])
    # The same answers from the .aiprof file (columns mapped, not parsed).
    gpu = os.path.join(a.source, FIXTURES[1])
    native = os.path.join(tmp, "t.aiprof")
    rc, _, err = run(a.aiprof, "import", gpu, "-o", native)
    check(rc == 0, "import to .aiprof: %s" % err.strip())
    sql = ("SELECT kind, count(*), sum(dur), sum(parent IS NULL), sum(length(args)) FROM slices GROUP BY kind "
           "UNION ALL SELECT 'window', count(*), total(dur), 0, 0 FROM slices WHERE ts BETWEEN "
           "(SELECT min(ts) + 1000000 FROM slices) AND (SELECT min(ts) + 50000000 FROM slices)")
    check(query_json(a.aiprof, native, sql) == query_json(a.aiprof, gpu, sql), ".aiprof answers as its source")
    safety(a.aiprof, sample, tmp)
    escaping(a.aiprof, tmp)
    csv_round_trip(a.aiprof, sample)
    shell(a.aiprof, sample)
    if a.python_path:
        python_agrees(a.aiprof, sample, a.python_path)
    print("%d checks, %d failures" % (CHECKS[0], len(FAILURES)))
    return 1 if FAILURES or CHECKS[0] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
