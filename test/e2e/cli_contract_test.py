#!/usr/bin/env python3
"""CLI contract: exit statuses, stray arguments, atomic outputs, escaping,
and the native .aiprof round trip. Traces here are hand-made (labelled) or
real fixtures."""
import atexit
import shutil
import argparse
import csv
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time

FAILURES = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what)


def run(aiprof, *args):
    p = subprocess.run([aiprof, *args], capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def run_in_terminal(aiprof, args, columns):
    """Runs aiprof with standard output on a pseudo-terminal (COLUMNS set):
    its standard output and exit status."""
    import pty
    import threading
    master, slave = pty.openpty()
    env = dict(os.environ, COLUMNS=str(columns), NO_COLOR="1")
    p = subprocess.Popen([aiprof, *args], stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks = []

    def read():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the other end closed
                return
            if not data:
                return
            chunks.append(data)
    reader = threading.Thread(target=read)
    reader.start()
    rc = p.wait(timeout=120)
    reader.join(timeout=60)
    os.close(master)
    return rc, b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def commands_with_output(aiprof):
    """Every subcommand (and sub-subcommand: "cluster map") whose --help
    offers -o/--output, as `aiprof --help` lists them: the commands' list
    comes from the binary, so a new one cannot be left out of a check."""
    def subcommands(*parents):
        text = run(aiprof, *parents, "--help")[1]
        listed = text.split("\nSubcommands:\n", 1)
        return re.findall(r"^  ([a-z][a-z-]*) ", listed[1], re.M) if len(listed) == 2 else []
    out = []
    for cmd in subcommands():
        nested = subcommands(cmd)
        for words in ([(cmd, sub) for sub in nested] if nested else [(cmd,)]):
            if re.search(r"^\s+-o,--output\b", run(aiprof, *words, "--help")[1], re.M):
                out.append(" ".join(words))
    return out


def widest(text):
    return max((len(line) for line in text.split("\n")), default=0)


def first_use(exe, tmp, fixtures):
    """A first-time user's audit on the shipped ResNet50 sample (notes
    trial_audit, items 9, 12, 13b, 13c)."""
    r50 = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                       "resnet50_num_workers_0.pt.trace.json.gz")

    # 9: one "top N" for text, JSON and CSV: JSON and CSV --top 3 listed
    # "PyTorch Profiler (0)" and ProfilerStep#8 (by total time), which the
    # text table (by self time) leaves out; CSV had no self_us.
    rc, out, _ = run(exe, "summary", r50, "--format", "json")
    every = json.loads(out)["ops"] if rc == 0 else []
    ranked = [o for o in every if not o["profiler_wrapper"] and not o["device_record"]]
    wrappers = [o for o in every if o["profiler_wrapper"] or o["device_record"]]
    check(every and every == ranked + wrappers and wrappers
          and all(a["self_us"] >= b["self_us"] for a, b in zip(ranked, ranked[1:])),
          "summary json lists every op by self time, the profiler wrappers last: %r" % [o["name"] for o in every[:5]])
    rc, out, _ = run(exe, "summary", r50, "--format", "json", "--top", "3")
    top_json = [o["name"] for o in json.loads(out)["ops"]] if rc == 0 else []
    rc, out, err = run(exe, "summary", r50, "--format", "csv", "--top", "3")
    rows = list(csv.DictReader(io.StringIO(out))) if rc == 0 else []
    rc, text, _ = run(exe, "summary", r50, "--top", "3")
    table = text[text.find("Top 3 ops by self time"):text.find("\nDevices\n")]
    check(len(top_json) == 3 and top_json == [o["name"] for o in ranked[:3]] == [r["name"] for r in rows]
          and all(name in table for name in top_json),
          "summary --top 3: the same ops in JSON, CSV and text: %r, %r" % (top_json, [r.get("name") for r in rows]))
    check(rows and all(r.get("profiler_wrapper") == "false" and r.get("self_us") for r in rows)
          and "--top 3 listed 3 of" in err, "summary csv has self_us and profiler_wrapper: %r" % rows[:1])

    # 7: device records are no ops. On Ascend level1 four of the top five
    # rows were one ~200 ms allreduce wait: HCCL's Notify_Wait tasks (Plane
    # thread and stream copies) and torch_npu's Overlap Analysis bands
    # "Communication" and "Communication(Not Overlapped)".
    ascend_dir = os.path.join(fixtures, "ascend-pt", "level1")
    rc, out, _ = run(exe, "summary", ascend_dir, "--format", "json", "--top", "5")
    top5 = json.loads(out)["ops"] if rc == 0 else []
    bad = [(o["category"], o["name"]) for o in top5
           if o["category"] in ("hccl_task", "overlap_analysis", "npu_sync") or o["device_record"]]
    check(len(top5) == 5 and not bad, "Ascend level1 top 5 ops hold no summary band, HCCL task or NPU wait: %r"
          % [(o["category"], o["name"]) for o in top5])
    rc, out, _ = run(exe, "summary", ascend_dir, "--format", "json")
    every = json.loads(out)["ops"] if rc == 0 else []
    records = {(o["category"], o["name"]) for o in every if o["device_record"]}
    check(("overlap_analysis", "Communication") in records and ("hccl_task", "Notify_Wait") in records
          and not any(c in ("cpu_op", "cann", "hccl") for c, _ in records),
          "Ascend level1: the bands and HCCL tasks are device records, no host op or collective is: %r"
          % sorted(records)[:8])

    # 12: text tables at a width. A name is shortened in the middle (80
    # columns, or less to fit --width or the terminal), padding is never
    # wider than the shown cells (whatif padded its slices to 250 columns),
    # and prose breaks at spaces.
    rc, out, _ = run(exe, "whatif", r50, "--scenario", "remove aten::add_")
    check(rc == 0 and " " * 90 not in out and "vectorized_elementwise_…" in out,
          "whatif's slice table pads to its shown names (%d)" % rc)
    rc, out, _ = run(exe, "--width", "100", "summary", r50, "--top", "5")
    ops = out[out.find("Top 5 ops"):out.find("\nDevices\n")]
    check(rc == 0 and ops and widest(ops) <= 100 and "Kernel   void cudnn::d…nt, int, int)\n" in ops,
          "summary --width 100: the op table fits, names shortened: %r" % ops[-300:])
    rc, out, _ = run(exe, "analyze", r50, "--width", "80", "--only", "attribution,critical_path")
    long_prose = [line for line in out.split("\n") if len(line) > 80 and not line.startswith("  ")]
    check(rc == 0 and not long_prose and widest(out) < 300,
          "analyze --width 80: prose fits, no 1,681-column line (widest %d): %r" % (widest(out), long_prose[:2]))
    rc, out, _ = run(exe, "analyze", r50)
    check(rc == 0 and widest(out) > 300, "without a terminal or --width a list item stays one line (%d)" % widest(out))
    rc, tty = run_in_terminal(exe, ["summary", r50, "--top", "5"], 100)
    want = run(exe, "--width", "100", "summary", r50, "--top", "5")[1]
    check(rc == 0 and tty == want, "a terminal of COLUMNS=100 gets --width 100's text: %r" % tty[:200])
    txt = os.path.join(tmp, "s.txt")
    rc, tty = run_in_terminal(exe, ["summary", r50, "--top", "5", "-o", txt], 100)
    check(rc == 0 and open(txt, encoding="utf-8").read() == run(exe, "summary", r50, "--top", "5")[1],
          "-o FILE from a terminal is not fitted to it")

    # 13b: an unknown command is named, with the closest ones ("A subcommand
    # is required" named nothing); `explain` points to what explains a run.
    rc, _, err = run(exe, "explain", r50)
    check(rc == 2 and "unknown command 'explain'" in err and "aiprof diagnose TRACE" in err
          and "analyze TRACE --only attribution,critical_path" in err, "explain: %r" % err)
    rc, _, err = run(exe, "--threads", "2", "--width", "80", "sumary", r50)
    check(rc == 2 and "unknown command 'sumary'; did you mean: summary" in err, "sumary: %r" % err)
    rc, _, err = run(exe, "esc\x1b[31m")
    check(rc == 2 and "\x1b" not in err and "unknown command 'esc\\x1b[31m'" in err, "hostile command word: %r" % err)

    # 13c: the V100 of the shipped ResNet50 samples (Tesla V100-DGXS-32GB)
    # is a known device.
    rc, out, err = run(exe, "analyze", r50, "--only", "roofline")
    check(rc == 0 and "Device:                            V100-SXM2-32GB" in out, "resnet50's V100 found: %r" % err)
    rc, out, err = run(exe, "analyze", r50, "--only", "roofline", "--device", "V100 PCIe")
    check(rc == 0 and "V100-PCIE-32GB" in out, "--device 'V100 PCIe': %r" % err[:200])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    a = ap.parse_args()
    exe = a.aiprof
    tmp = tempfile.mkdtemp(prefix="aiprof_cli_")
    atexit.register(shutil.rmtree, tmp, True)

    # Usage errors exit 2.
    check(run(exe)[0] == 2, "no subcommand exits 2")
    check(run(exe, "summary")[0] == 2, "missing input exits 2")
    real = os.path.join(a.fixtures, "torch-cpu", "convnet_bs8_contiguous.kineto.json")
    check(run(exe, "summary", real, "--format", "xml")[0] == 2, "bad --format exits 2")
    check(run(exe, "summary", real, "stray")[0] == 2, "stray argument exits 2")

    # Unusable input exits 1 and names the file.
    rc, _, err = run(exe, "summary", os.path.join(tmp, "missing.json"))
    check(rc == 1 and "missing.json" in err, "missing file exits 1 naming it: %r" % err)
    bad = os.path.join(tmp, "bad.json")
    open(bad, "w").write('{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2}')
    rc, _, err = run(exe, "summary", bad)
    check(rc == 1 and "bad.json" in err and "byte" in err, "truncated file exits 1 with a position: %r" % err)

    # Outputs are atomic: a failed run leaves an existing output untouched.
    out = os.path.join(tmp, "out.json")
    open(out, "w").write("previous")
    rc, _, _ = run(exe, "summary", bad, "-o", out)
    check(rc == 1 and open(out).read() == "previous", "failed run keeps the old output")
    rc, _, _ = run(exe, "summary", real, "--format", "json", "-o", out)
    check(rc == 0 and json.load(open(out))["schema"] == "aiprof.summary/1", "-o writes the report")
    check(not [f for f in os.listdir(tmp) if ".tmp." in f], "no temporary files left behind")
    rc, _, err = run(exe, "summary", real, "-o", os.path.join(tmp, "no", "such", "dir", "x.txt"))
    check(rc == 1, "unwritable output exits 1")

    # Untrusted names (hand-made trace): JSON stays valid, CSV quotes and
    # defuses formulas, text has no raw escape sequences.
    evil_names = ['<script>alert(1)</script>', '=HYPERLINK("http://x")', 'a,b"c', 'line\nbreak', 'esc\x1b[31m',
                  'osc\x1b]0;pwned\x07\x1b[31mred']
    events = [{"ph": "X", "name": n, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5}
              for i, n in enumerate(evil_names)]
    evil = os.path.join(tmp, "evil.json")
    json.dump({"traceEvents": events}, open(evil, "w"))
    rc, js, _ = run(exe, "summary", evil, "--format", "json", "--top", "0")
    names = {op["name"] for op in json.loads(js)["ops"]}
    check(rc == 0 and names == set(evil_names), "JSON round-trips hostile names")
    check("<script>" not in js, "JSON escapes < and >")
    rc, cs, _ = run(exe, "summary", evil, "--format", "csv", "--top", "0")
    rows = list(csv.DictReader(io.StringIO(cs)))
    check(len(rows) == len(evil_names), "CSV has one row per op")
    check(all(not r["name"].startswith("=") for r in rows), "CSV defuses formulas")
    check("a,b\"c" in {r["name"] for r in rows}, "CSV quotes commas and quotes")
    rc, txt, _ = run(exe, "summary", evil, "--top", "0")
    check("\x1b" not in txt, "text output has no raw escape character")
    # Every CSV writer shows terminal controls as text (CsvField), as the
    # text output does: CSV is printed to a terminal without -o, and an OSC
    # retitle (ESC ] ... BEL) or a colour must not reach it (review 26,
    # finding 2: summary, query and roofline wrote raw ESC and BEL). JSON is
    # the format for exact values (above). Roofline's rows need a FLOP model:
    # the real torch_npu folder with its matmul task renamed.
    ascend = os.path.join(tmp, "hostile_ascend_pt")
    shutil.copytree(os.path.join(a.fixtures, "ascend-pt", "level1", "rank0_ascend_pt"), ascend)
    task = "aclnnAddmm_MatMulCommon_MatMulV2"
    for name, new in (("trace_view.json", json.dumps(evil_names[-1])[1:-1]), ("kernel_details.csv", evil_names[-1])):
        path = os.path.join(ascend, "ASCEND_PROFILER_OUTPUT", name)
        body = open(path, encoding="utf-8").read()
        check(task in body, "the torch_npu fixture's %s names %s" % (name, task))
        open(path, "w", encoding="utf-8").write(body.replace(task, new))
    evil2 = os.path.join(tmp, "evil2.json")
    json.dump({"traceEvents": [dict(e, dur=7) for e in events]}, open(evil2, "w"))
    for args in [("summary", evil, "--format", "csv", "--top", "0"),
                 ("query", evil, "SELECT name FROM slices", "--format", "csv"),
                 ("roofline", ascend),
                 ("diff", evil, evil2, "--format", "csv", "--top", "0"),
                 ("whatif", evil, "--scenario", "remove bel\x07\x1b[31m", "--format", "csv")]:
        p = subprocess.run([exe, *args], capture_output=True, timeout=120)
        label = " ".join(x for x in args if x not in (evil, evil2, ascend) and "\x1b" not in x)
        check(p.returncode == 0 and b"\x1b" not in p.stdout and b"\x07" not in p.stdout
              and b"\\x1b" in p.stdout and b"\\x07" in p.stdout,
              "%s: CSV shows ESC and BEL as text (%d): %r" % (label, p.returncode, p.stdout[:300] + p.stderr[:200]))

    # Commands whose output has no import section warn on stderr when
    # records were skipped (hand-made trace: one good slice, two bad ones).
    halfbad = os.path.join(tmp, "halfbad.json")
    open(halfbad, "w").write('{"traceEvents": [{"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, '
                             '"ts": 1, "dur": 5}, {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": , "dur": 1}, '
                             '{"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 9, "dur": -3}]}')
    for cmd in (["diagnose"], ["suggest"], ["analyze"], ["whatif", "--scenario", "remove a"],
                ["view", "--flame", "--format", "folded", "-o", os.path.join(tmp, "f.folded")]):
        rc, _, err = run(exe, cmd[0], halfbad, *cmd[1:])
        check(rc == 0 and "the import counted 2 malformed or unsupported records" in err and "what was done" in err
              and "halfbad.json:byte" in err, "%s warns of the skipped records: %r" % (cmd[0], err))
    rc, _, err = run(exe, "diagnose", real)
    check(rc == 0 and "import counted" not in err, "no warning on a clean trace: %r" % err)
    # Partly overlapping slices (real: 29 in TraceLens' MI300 ResNet) are
    # kept, only not nested: summary lists them, the others do not warn.
    mi300 = os.path.join(a.fixtures, "tracelens", "mi300__resnet_act_checkpoint.json.gz")
    rc, _, err = run(exe, "whatif", mi300, "--scenario", "remove no_such_op")
    check(rc == 0 and "import counted" not in err, "no warning for partial overlaps: %r" % err)

    # Native file: summary of the .aiprof equals summary of the source.
    for src in [real, os.path.join(a.fixtures, "kineto",
                "HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz")]:
        native = os.path.join(tmp, "t.aiprof")
        rc, _, err = run(exe, "import", src, "-o", native)
        check(rc == 0 and os.path.exists(native), "import writes .aiprof: " + err)
        r1 = json.loads(run(exe, "summary", src, "--format", "json", "--top", "0")[1])
        r2 = json.loads(run(exe, "summary", native, "--format", "json", "--top", "0")[1])
        r1.pop("source"); r2.pop("source")
        check(r1 == r2, "summary of .aiprof equals summary of " + os.path.basename(src))
        truncated = os.path.join(tmp, "cut.aiprof")
        data = open(native, "rb").read()
        open(truncated, "wb").write(data[: len(data) // 2])
        rc, _, err = run(exe, "summary", truncated)
        check(rc == 1 and "cut.aiprof" in err, "truncated .aiprof exits 1: " + err)

    # Streams: standard input ("-", gzip-compressed here) and a named pipe
    # (what a shell's <(...) gives) are read once, copied to a temporary
    # file; the summary equals the file's, errors and diagnostics name the
    # input as given, and no temporary file is left.
    src = os.path.join(a.fixtures, "kineto",
                       "HolisticTraceAnalysis__tests__data__nccl_parser_config__nccl_data.json.gz")
    before_tmp = set(os.listdir(tempfile.gettempdir()))
    want = json.loads(run(exe, "summary", src, "--format", "json", "--top", "0")[1])
    want.pop("source")
    p = subprocess.run([exe, "summary", "-", "--format", "json", "--top", "0"], stdin=open(src, "rb"),
                       capture_output=True, timeout=120)
    got = json.loads(p.stdout) if p.returncode == 0 else {}
    check(got.pop("source", None) == "<stdin>" and got == want, "summary - (standard input) equals the file's")
    fifo = os.path.join(tmp, "pipe.json")
    os.mkfifo(fifo)
    bad = b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -5}, {"ph": "X", '
    writer = subprocess.Popen(["sh", "-c", 'cat "$1" > "$2"', "sh", "/dev/stdin", fifo], stdin=subprocess.PIPE)
    proc = subprocess.Popen([exe, "summary", fifo], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer.communicate(bad, timeout=60)
    _, err = proc.communicate(timeout=60)
    err = err.decode("utf-8", "replace")
    check(proc.returncode == 1 and fifo + ": truncated JSON" in err and "aiprof-input-" not in err,
          "a named pipe's error names the pipe: " + err.strip())
    good = (b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -5},'
            b' {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 9, "dur": 5}]}')
    p = subprocess.run([exe, "summary", "-", "--format", "json"], input=good, capture_output=True, timeout=60)
    diag = json.loads(p.stdout).get("diagnostics", {}) if p.returncode == 0 else {}
    check(diag.get("negative_duration", {}).get("first_at") == "<stdin>:byte 17",
          "a diagnostic of standard input names it: %s" % diag)
    # Nothing readable at all: an error naming standard input, not an empty trace.
    none = b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": -5}]}'
    p = subprocess.run([exe, "summary", "-"], input=none, capture_output=True, timeout=60)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 1 and "<stdin>: no event could be read (1 record skipped; negative_duration: 1, first at "
          "<stdin>:byte 17" in err and "aiprof-input-" not in err,
          "standard input with no readable event is an error naming it: " + err.strip())
    left = [n for n in set(os.listdir(tempfile.gettempdir())) - before_tmp if n.startswith("aiprof-input-")]
    check(not left, "no temporary copy left: %s" % left)

    # An endless stream that is no trace fails on its first MiB (it was
    # copied to $TMPDIR without end: 10 GB in 5 s), and the copy of a stream
    # is never visible in $TMPDIR, so even SIGKILL leaves nothing behind.
    own_tmp = os.path.join(tmp, "tmpdir")
    os.mkdir(own_tmp)
    env = dict(os.environ, TMPDIR=own_tmp)
    p = subprocess.run([exe, "summary", "/dev/zero"], capture_output=True, timeout=60, env=env)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 1 and "/dev/zero: unrecognised format" in err, "/dev/zero fails at once: " + err.strip())
    fifo2 = os.path.join(tmp, "slow.json")
    os.mkfifo(fifo2)
    proc = subprocess.Popen([exe, "summary", fifo2], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    with open(fifo2, "wb") as w:
        w.write(b'{"traceEvents": [' + b'{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 5},' * 30000)
        w.flush()
        time.sleep(0.5)
        check(os.listdir(own_tmp) == [], "a stream's copy is not visible in $TMPDIR: %s" % os.listdir(own_tmp))
        proc.kill()
        proc.wait(timeout=60)
    check(os.listdir(own_tmp) == [], "SIGKILL during a stream's copy leaves nothing: %s" % os.listdir(own_tmp))

    # Durations each within 2^61 ns whose sum passes 2^63 ns: every total
    # would overflow (the summary printed a saturated total, a halved mean and
    # a negative self time, exit 0). Hand-made: 8 slices of just under 2^61 ns.
    huge = os.path.join(tmp, "huge_durations.json")
    with open(huge, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "name": "op_Z", "pid": 1, "tid": t, "ts": 0,
                                    "dur": 2305843009213693} for t in range(8)]}, f)
    rc, _, err = run(exe, "summary", huge)
    check(rc == 1 and "huge_durations.json: the slices' durations sum past 2^63 ns" in err and "op_Z" in err,
          "durations summing past 2^63 ns are an error naming the file and the longest slice: " + err.strip())
    with open(huge, "w") as f:
        json.dump({"traceEvents": [{"ph": "X", "name": "op_Z", "pid": 1, "tid": t, "ts": 0,
                                    "dur": 2305843009213693} for t in range(3)]}, f)
    rc, out, err = run(exe, "summary", huge, "--format", "json")
    ops = [o for o in json.loads(out)["ops"] if o["name"] == "op_Z"] if rc == 0 else []
    check(ops and ops[0]["total_us"] == 3 * 2305843009213693, "three such durations still sum exactly: %s" % ops)

    # A value or combination of flags no run could use is a bad command line
    # (2), as CLI11's own checks; these exited 1, as for unusable input.
    out_x = os.path.join(tmp, "never.aiprof")
    for args, says in [(("trace", "-o", out_x, "--duration", "10x", "--", "true"), "is not a duration"),
                       (("trace", "-o", out_x, "--duration", "", "--", "true"), "is not a duration"),
                       (("trace", "-o", out_x, "--sampling-rate", "150%", "--", "true"), "is not a share"),
                       (("trace", "-o", out_x), "nothing to trace"),
                       (("analyze", src, "--only", "nosuch"), "unknown analysis 'nosuch'")]:
        rc, _, err = run(exe, *args)
        check(rc == 2 and says in err and not os.path.exists(out_x),
              "%s: exit 2 (%d): %s" % (" ".join(args[:4]), rc, err.strip()[:200]))
    # The same for the text of a flag that a library parses after CLI11: a
    # scenario, constraints, metric names, a duration, and flags that need
    # another (all exited 1). Text read from a file (a --map, a --file's SQL)
    # stays an unusable input (1: test/e2e/diff_e2e_test.py, query_e2e_test.py).
    other = os.path.join(a.fixtures, "torch-cpu", "convnet_bs8_channels_last.kineto.json")
    out_md = os.path.join(tmp, "never.md")
    sql_file = os.path.join(tmp, "q.sql")
    open(sql_file, "w").write("SELECT 1")
    bad_sc = "scale aten::mm x"
    says_sc = "scenario clause 'scale aten::mm x': FACTOR must be a number"
    bad_dev = "device Z80"
    says_dev = "scenario clause 'device Z80': unknown device 'Z80' (known: "
    pair = ("--before", real, "--after", other)
    for args, says in [(("whatif", real, "--scenario", bad_sc), says_sc),
                       (("whatif", real, "--scenario", "remove aten::mm", "--scenario", bad_sc), says_sc),
                       (("validate", *pair, "--scenario", bad_sc), says_sc),
                       (("card", *pair, "--scenario", bad_sc), says_sc),
                       (("report", real, "--before", other, "--scenario", bad_sc, "-o", out_md), says_sc),
                       # A device clause is the scenario's text too (it exited 1).
                       (("whatif", real, "--scenario", bad_dev), says_dev),
                       (("validate", *pair, "--scenario", bad_dev), says_dev),
                       (("card", *pair, "--scenario", bad_dev, "--db", os.path.join(tmp, "never.db")), says_dev),
                       (("report", real, "--before", other, "--scenario", bad_dev, "-o", out_md), says_dev),
                       (("report", real, "--scenario", "remove aten::mm", "-o", out_md), "--scenario needs --before"),
                       (("validate", *pair, "--statistic", "mean"), "--statistic needs --scenario"),
                       (("validate", *pair, "--metrics", "latncy"), "unknown metric 'latncy'"),
                       (("card", *pair, "--metric", "latncy"), "unknown metric 'latncy'"),
                       (("validate", *pair, "--format", "pdf"), "--format pdf needs -o FILE.pdf"),
                       (("suggest", real, "--constraints", "memory<<3GB"), "constraint 'memory<<3GB'"),
                       (("report", real, "--constraints", "speed<3", "-o", out_md), "unknown name 'speed'"),
                       (("query", real, "SELECT 1", "--timeout", "10x"), "--timeout 10x is not a duration"),
                       (("query", real, "SELECT 1", "--file", sql_file), "give the SQL or --file, not both")]:
        rc, _, err = run(exe, *args)
        check(rc == 2 and says in err and not os.path.exists(out_md),
              "%s: exit 2 (%d): %s" % (" ".join(a for a in args if a not in (real, other)), rc, err.strip()[:200]))
    # A device clause whose devices file cannot be read: the file's fault, 1.
    no_devices = os.path.join(tmp, "no_devices.yaml")
    rc, _, err = run(exe, "whatif", real, "--scenario", "device H100-SXM5-80GB", "--devices", no_devices)
    check(rc == 1 and "cannot read devices file " + no_devices in err,
          "whatif --devices (missing file) --scenario 'device H100-SXM5-80GB': exit 1 (%d): %s" % (rc, err.strip()[:200]))

    # The listening commands and push follow the same rule (audit2 item 8:
    # monitor's --alert, --latency-buckets, --metrics-listen and serve's
    # --listen exited 1, while monitor's --timeout and --window exited 2):
    # a flag value that does not parse or is out of range, or flags that
    # need another, exit 2 before anything is read, created or started.
    incidents = os.path.join(tmp, "incidents")
    logdir = os.path.join(tmp, "logdir")
    os.makedirs(logdir)
    alert = ("--alert", "p99_latency > 2s")
    for args, says in [(("monitor", "--alert", "p99_latency >> 2s"), "column"),
                       (("monitor", "--alert", "p99_latncy > 2s"), "unknown metric 'p99_latncy'"),
                       (("monitor", *alert, *alert), "is given twice"),
                       (("monitor", "--alert", "step_time_p99 > 1.2 * baseline"), "give --service"),
                       (("monitor", *alert, "--latency-buckets", "1,0.5"), "bounds must increase"),
                       (("monitor", *alert, "--metrics-listen", "nonsense"), "--metrics-listen nonsense: expected"),
                       (("monitor", *alert, "--metrics-listen", "127.0.0.1:99999"), "--metrics-listen 127.0.0.1:99999"),
                       (("monitor", *alert, "--metrics-listen", "0.0.0.0:0"), "not a loopback address"),
                       (("monitor", *alert, "--timeout", "xyz"), "--timeout"),
                       (("monitor", *alert, "--window", "-5s"), "--window"),
                       (("serve", "--logdir", logdir, "--listen", "nonsense"), "--listen nonsense: expected"),
                       (("serve", "--logdir", logdir, "--listen", "127.0.0.1:99999"), "--listen 127.0.0.1:99999"),
                       (("serve", "--logdir", logdir, "--listen", "0.0.0.0:0"), "give --token-file"),
                       (("push", real, "--server", "127.0.0.1:8080"), "expected http://"),
                       (("push", real, "--server", "http://127.0.0.1:99999"), "the port is a number"),
                       (("push", real, "--server", "https://127.0.0.1:8080", "--token-file", sql_file),
                        "https is not supported")]:
        if args[0] == "monitor":
            args = (*args, "-o", incidents, "--", "true")
        rc, _, err = run(exe, *args)
        label = " ".join(a for a in args if a not in (real, logdir, incidents, sql_file))
        created = os.path.exists(incidents) or os.listdir(logdir) != []
        check(rc == 2 and says in err and not created,
              "%s: exit 2, nothing created (%d, %s): %s" % (label, rc, created, err.strip()[:200]))
        shutil.rmtree(incidents, True)
        for leftover in os.listdir(logdir):
            shutil.rmtree(os.path.join(logdir, leftover), True)
    # Failures at run time stay 1.
    for args, says in [(("monitor", *alert, "--pid", "999999", "-o", incidents), "no such process"),
                       (("serve", "--logdir", os.path.join(tmp, "no_logdir"), "--listen", "127.0.0.1:0"),
                        "not a folder"),
                       (("push", real, "--server", "http://127.0.0.1:1"), "cannot connect")]:
        rc, _, err = run(exe, *args)
        check(rc == 1 and says in err, "%s: exit 1 (%d): %s" % (" ".join(args[:1] + args[2:4]), rc, err.strip()[:200]))
    shutil.rmtree(incidents, True)

    # -o naming a device or pipe (/dev/null, /dev/stdout, a FIFO) is written
    # in place, as a shell's `>` would, in the format the command prints
    # without -o (report, which needs -o: HTML). These exited 1 "cannot tell
    # the output format from the file name" (export, roofline, view, card and
    # mcp choose no format by the name). run()'s standard output is a pipe.
    # Every command whose help offers -o (commands_with_output) is run here
    # or says why not.
    written = {"summary": (real,), "analyze": (real,), "diagnose": (real,), "suggest": (real,),
               "whatif": (real, "--scenario", "remove aten::mm"), "diff": (real, other),
               "validate": ("--before", real, "--after", other), "node-bottleneck": (real,),
               "query": (real, "SELECT count(*) FROM slices"), "report": (real,), "roofline": (real,),
               "view": (real, "--flame")}
    not_written = {"trace": "records a command", "monitor": "-o is a folder of incidents",
                   "import": "-o is required (a binary .aiprof)", "export": "-o is required (a binary trace)",
                   "history": "prints nothing without stored validations",
                   "card": "measures a pair and stores a card each run",
                   "cluster map": "-o is a folder of digests", "cluster reduce": "needs a folder of digests",
                   "cluster analyze": "-o is a folder"}
    offered = commands_with_output(exe)
    check(len(offered) >= len(written) and set(offered) == set(written) | set(not_written),
          "every command with -o is checked with -o /dev/stdout or says why not: offered %s; unclassified %s; "
          "gone %s" % (offered, sorted(set(offered) - set(written) - set(not_written)),
                       sorted((set(written) | set(not_written)) - set(offered))))
    for args in [(cmd, *rest) for cmd, rest in written.items() if cmd in offered]:
        label = " ".join(a for a in args if a not in (real, other))
        if args[0] == "report":
            want_path = os.path.join(tmp, "want.html")
            rc, _, err = run(exe, *args, "-o", want_path)
            want = open(want_path, encoding="utf-8").read() if rc == 0 else None
        else:
            rc, want, err = run(exe, *args)
        check(rc == 0 and want, "%s: the output without -o (%d): %s" % (label, rc, err.strip()[:200]))
        rc, out, err = run(exe, *args, "-o", "/dev/null")
        check(rc == 0 and out == "", "%s -o /dev/null: exit 0 (%d): %s" % (label, rc, err.strip()[:200]))
        rc, out, err = run(exe, *args, "-o", "/dev/stdout")
        # The report page names the second it was made: not compared.
        stamp = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC")
        check(rc == 0 and want is not None and stamp.sub("", out) == stamp.sub("", want),
              "%s -o /dev/stdout: exit 0 and the default format (%d): %s" % (label, rc, err.strip()[:200]))
    # -o /dev/stdout (or /dev/fd/1) with standard output redirected to a file
    # is written through that descriptor, as a shell's `>` and `>>` would:
    # it exited 1 "cannot tell the output format" (the name resolves to the
    # regular file), and the writer would have replaced the file by rename,
    # dropping what `>>` kept (review 26, finding 3).
    want = run(exe, "summary", real)[1]
    want_csv = run(exe, "query", real, "SELECT count(*) AS n FROM slices", "--format", "csv")[1]
    redirected = os.path.join(tmp, "redirected.txt")
    for name in ("/dev/stdout", "/dev/fd/1"):
        for mode, earlier in (("wb", ""), ("ab", "earlier line\n")):
            for args, expect in ((("summary", real), want),
                                 (("query", real, "SELECT count(*) AS n FROM slices", "--format", "csv"), want_csv)):
                open(redirected, "w").write(earlier)
                inode = os.stat(redirected).st_ino
                with open(redirected, mode) as f:
                    p = subprocess.run([exe, *args, "-o", name], stdout=f, stderr=subprocess.PIPE, timeout=120)
                got = open(redirected, "rb").read().decode("utf-8", "replace")
                check(p.returncode == 0 and got == earlier + expect and os.stat(redirected).st_ino == inode,
                      "%s -o %s %s file: exit 0, %s (%d): %r %s" %
                      (args[0], name, ">" if mode == "wb" else ">>",
                       "the default format" if mode == "wb" else "appended after the earlier line",
                       p.returncode, got[:80], p.stderr.decode("utf-8", "replace").strip()[:200]))
    fifo_out = os.path.join(tmp, "out_pipe")
    os.mkfifo(fifo_out)
    reader = subprocess.Popen(["cat", fifo_out], stdout=subprocess.PIPE)
    rc, _, err = run(exe, "summary", real, "-o", fifo_out)
    while rc != 0 and reader.poll() is None:  # the pipe was never opened: end cat's wait
        try:
            os.close(os.open(fifo_out, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:
            time.sleep(0.05)
    got = reader.communicate(timeout=60)[0].decode("utf-8", "replace")
    check(rc == 0 and got == run(exe, "summary", real)[1],
          "summary -o FIFO: exit 0 and the text summary (%d): %s" % (rc, err.strip()[:200]))
    # A regular file (or a new name) with no known ending is still an error
    # that names it, and is left as it was.
    plain = os.path.join(tmp, "out.xyz")
    open(plain, "w").write("previous")
    for path in (plain, os.path.join(tmp, "new_output")):
        rc, _, err = run(exe, "summary", real, "-o", path)
        check(rc == 1 and path + ": cannot tell the output format from the file name" in err,
              "-o %s: exit 1 naming it (%d): %s" % (os.path.basename(path), rc, err.strip()[:200]))
    check(open(plain).read() == "previous" and not os.path.exists(os.path.join(tmp, "new_output")),
          "an output whose format is unknown is not written")

    # The "wrote PATH" lines show a path's control bytes escaped, as errors do
    # (a path with ESC [2J cleared the terminal).
    esc_out = os.path.join(tmp, "x\x1b[2Jy.aiprof")
    p = subprocess.run([exe, "import", src, "-o", esc_out], capture_output=True, timeout=120)
    check(p.returncode == 0 and b"\x1b" not in p.stderr and b"\\x1b[2Jy.aiprof" in p.stderr,
          "import's wrote line escapes the path: %r" % p.stderr[:200])

    # Hostile input (input trial, 'in'). A zstd frame of RLE blocks (4 bytes
    # per 128 KiB of spaces, hand-made): 512 KiB inflate to 16 GiB inside a
    # valid document. It was read to the end (~80 s here; a 33 MB one is 1 TB,
    # hours); now the read stops past 1 GiB at 1,000 times the compressed size.
    def rle_header(last, kind, size):
        return (last | (kind << 1) | (size << 3)).to_bytes(4, "little")[:3]
    prefix, suffix = b'{"traceEvents":[', b"]}"
    bomb = os.path.join(tmp, "bomb.json.zst")
    with open(bomb, "wb") as f:
        f.write(b"\x28\xb5\x2f\xfd\x00\x38" + rle_header(0, 0, len(prefix)) + prefix)
        f.write((rle_header(0, 1, 128 << 10) + b" ") * (128 << 10))
        f.write(rle_header(1, 0, len(suffix)) + suffix)
    try:
        p = subprocess.run([exe, "summary", bomb], capture_output=True, timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 1 and bomb + ": zstd stream expands more than 1000 times" in err
              and "stopped at compressed byte" in err, "zstd bomb: exit 1 naming file and place (%d): %s"
              % (p.returncode, err.strip()[:300]))
    except subprocess.TimeoutExpired:
        check(False, "zstd bomb: still reading after 60 s")
    # An endless stream that starts like JSON (`yes '{'`) passed the format
    # check and was copied to $TMPDIR up to 64 GiB; its structure is checked
    # on the first MiB too now.
    yes = subprocess.Popen(["yes", "{"], stdout=subprocess.PIPE)
    try:
        p = subprocess.run([exe, "summary", "-"], stdin=yes.stdout, capture_output=True, timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode == 1 and "<stdin>: invalid JSON at byte 2" in err,
              "yes '{' on stdin: exit 1 at its byte 2 (%d): %s" % (p.returncode, err.strip()[:300]))
    except subprocess.TimeoutExpired:
        check(False, "yes '{' on stdin: still copying after 60 s")
    finally:
        yes.kill()
        yes.wait()
    # A symbolic link loop was "no such file or folder"; it says its reason.
    loop = os.path.join(tmp, "loop.json")
    os.symlink(loop, loop)
    rc, _, err = run(exe, "summary", loop)
    check(rc == 1 and loop + ": cannot open: Too many levels of symbolic links" in err,
          "symlink loop: exit 1 with its reason (%d): %s" % (rc, err.strip()[:200]))

    # Bad-input audit (helper bad), hand-made folders that aborted the
    # process (exit 134, 'terminate called after throwing ...'): an msprof
    # device_N folder whose N is past an int (std::stoi), and a graph capture
    # folder with a symbolic link loop beside its replay (filesystem_error).
    prof = os.path.join(tmp, "PROF_000001", "device_99999999999", "summary")
    os.makedirs(prof)
    with open(os.path.join(prof, "op_statistic_1.csv"), "w") as f:
        f.write("Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\n"
                "0,MatMul,AI_CORE,1,5.5,5.5,5.5,5.5,100\n")
    rc, _, err = run(exe, "summary", os.path.dirname(os.path.dirname(prof)))
    check(rc == 1 and "PROF_000001" in err and "terminate" not in err,
          "msprof device_99999999999: exit 1 naming the folder (%d): %s" % (rc, err.strip()[:200]))
    graphs = os.path.join(tmp, "graphs")
    os.makedirs(os.path.join(graphs, "capture_traces"))
    with open(os.path.join(graphs, "capture_traces", "execution_details.json"), "w") as f:
        f.write('[{"file": "c.json", "batch_size": 1, "mode": "FULL"}]')
    with open(os.path.join(graphs, "capture_traces", "c.json"), "w") as f:
        f.write('{"traceEvents": []}')
    with open(os.path.join(graphs, "replay.json"), "w") as f:
        f.write('{"traceEvents": []}')
    os.symlink("loop", os.path.join(graphs, "loop"))
    rc, _, err = run(exe, "summary", graphs)
    check(rc == 1 and "replay.json" in err and "terminate" not in err,
          "graph capture folder with a link loop: exit 1 naming the replay (%d): %s" % (rc, err.strip()[:200]))

    first_use(exe, tmp, a.fixtures)

    print("cli contract: %d passed, %d failed" % (CHECKS[0] - len(FAILURES), len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
