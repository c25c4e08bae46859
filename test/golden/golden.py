#!/usr/bin/env python3
"""Golden outputs: what users see, recorded once and compared on every run,
so that a change of the top half (session, documents, renderers) cannot
change a figure or a page by accident.

For every trace in ../shared/fixtures and test/data it runs the JSON of
summary, analyze, diagnose and suggest, every view in every format and
every export format (as `aiprof view --help` and `aiprof export --help` list
them); plus validate on the shipped ResNet50 pair and on the benchmark
files in test/data/validation, and cluster map + reduce on the multi-rank
fixtures. Machine-readable outputs (JSON) are stored whole, normalised only
where they hold a wall-clock time or a temporary path; pages and binary
exports are stored as their SHA-256 and size (a page changed on purpose is
rewritten with --record and its change named in the commit).

  golden.py --aiprof build/aiprof --fixtures ../shared/fixtures --data test/data \
            --golden test/golden/expected [--record] [-k SUBSTRING]
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Keys whose values are wall-clock measurements of aiprof itself.
RULES_DIR = re.compile(r'[^\s"'"'"'(]*/rules/')
# Graphviz measures label text with the fonts installed, so laid-out
# topology pages differ between machines in coordinates and path points:
# they are compared by their text (every label and title, sorted); the
# DOT output keeps the whole graph.
LAYOUT_TEXT = re.compile(rb">([^<>]+)<")
VOLATILE_KEYS = {"elapsed_ms", "generated_utc", "import_ms", "analyze_ms", "wall_ms"}


def same_bytes(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as x, open(b, "rb") as y:
        return x.read() == y.read()


def inputs(fixtures, data):
    """Every input once: a file under data that holds the same bytes as one
    under fixtures (resnet50_num_workers_{0,4}, alexnet_a100, convnet_bs8: the
    repository ships copies for the sample job and for checkouts without
    ../shared) is the fixture's case, not a second one."""
    out = []
    by_size = {}
    for root in [fixtures, data]:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            # Folders aiprof imports as one input (torch_npu *_ascend_pt, msprof PROF_*, job folders).
            for d in list(dirnames):
                if d.endswith("_ascend_pt") or d.startswith("PROF_") or d.startswith("level"):
                    out.append(os.path.join(dirpath, d))
                    dirnames.remove(d)
            for f in sorted(filenames):
                if re.search(r"\.(json|json\.gz|sqlite)$", f) and not f.endswith(".meta.json") \
                        and "/validation" not in dirpath and "/rules" not in dirpath \
                        and "/pairs" not in dirpath and "/diff/" not in dirpath + "/" \
                        and not f.startswith("execution_details") and "capture_trace" not in f \
                        and "/crash_gloo" not in dirpath and "/step_offset_gloo" not in dirpath \
                        and "/llm_cpu" not in dirpath:
                    path = os.path.join(dirpath, f)
                    if root == data and any(same_bytes(path, q) for q in by_size.get(os.path.getsize(path), [])):
                        continue
                    if root == fixtures:
                        by_size.setdefault(os.path.getsize(path), []).append(path)
                    out.append(path)
    return out


def normalise(obj, tmp):
    if isinstance(obj, dict):
        return {k: ("<volatile>" if k in VOLATILE_KEYS else normalise(v, tmp)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [normalise(v, tmp) for v in obj]
    if isinstance(obj, str):
        # Rule files are named by the checkout's absolute path.
        return RULES_DIR.sub("<rules>/", obj.replace(tmp, "<tmp>"))
    return obj


# Calibration on first need off and no user devices file: the CPU traces'
# roofline must not depend on whether this machine was measured before
# (src/analysis/roofline/cpu_calibration.h).
ENV = dict(os.environ, AIPROF_CALIBRATE="0", XDG_CONFIG_HOME=os.path.join(tempfile.gettempdir(), "aiprof-golden-no-config"))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, timeout=600, env=ENV)
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")


def json_case(cmd, tmp):
    rc, out, err = run(cmd)
    if rc != 0:
        return {"exit": rc, "stderr": err.strip().splitlines()[-1:] if err else []}
    try:
        return normalise(json.loads(out), tmp)
    except ValueError:
        return {"exit": rc, "not_json": hashlib.sha256(out).hexdigest()}


def digest_case(cmd, path, laid_out=False):
    rc, out, err = run(cmd)
    if rc != 0:
        return {"exit": rc, "stderr": err.strip().splitlines()[-1:] if err else []}
    data = open(path, "rb").read() if path else out
    if laid_out:
        texts = sorted(t.strip() for t in LAYOUT_TEXT.findall(data) if t.strip())
        return {"sha256_of_text": hashlib.sha256(b"\n".join(texts)).hexdigest(), "texts": len(texts)}
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def text_case(cmd, path, tmp):
    """A Markdown or text output, whole, with its generation time masked."""
    rc, out, err = run(cmd)
    if rc != 0:
        return {"exit": rc, "stderr": err.strip().splitlines()[-1:] if err else []}
    text = open(path, encoding="utf-8", errors="replace").read() if path else out.decode("utf-8", "replace")
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", "<utc>", text.replace(tmp, "<tmp>"))
    text = RULES_DIR.sub("<rules>/", text)
    return text.splitlines()


def views_and_exports(exe):
    """Every view with its formats and every export format, as the binary's
    help lists them (`view --help`: "--NAME ... (formats: A B)", from the
    views' registry; `export --help`: "--format TEXT:{A,B}"), so that a new
    view or format is recorded and compared without an edit here."""
    def help_of(cmd):
        p = subprocess.run([exe, cmd, "--help"], capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{exe} {cmd} --help: exit {p.returncode}: {p.stderr.strip()}")
        return p.stdout
    views = []
    for option in re.split(r"\n(?=  -)", help_of("view")):
        name = re.match(r"\s*--([a-z][a-z0-9-]*)", option)
        formats = re.search(r"\(formats: ([a-z0-9 -]+)\)", option)
        if name and formats:
            views.append((name.group(1), formats.group(1).split()))
    exports = re.search(r"--format TEXT:\{([a-z0-9,-]+)\}", help_of("export"))
    if not views or not exports:
        sys.exit(f"{exe}: no views (view --help) or export formats (export --help) found")
    return views, exports.group(1).split(",")


def cases_for(exe, path, rel, tmp, views, exports):
    """(name, thunk) pairs for one input."""
    cases = []
    for cmd in ["summary", "analyze", "diagnose", "suggest"]:
        extra = ["--threads", "2"] if cmd == "summary" else []
        cases.append((f"{cmd}/{rel}", lambda c=cmd, e=extra: json_case([exe, c, path, "--format", "json", *e], tmp)))
    md = os.path.join(tmp, f"report.{abs(hash(rel))}.md")
    cases.append((f"report-md/{rel}", lambda o=md: text_case([exe, "report", path, "-o", o], o, tmp)))
    for view, formats in views:
        for fmt in formats:
            out = os.path.join(tmp, f"{view}.{fmt}.{abs(hash(rel))}")
            laid_out = view == "topology" and fmt != "dot"
            cases.append((f"view-{view}-{fmt}/{rel}",
                          lambda v=view, f=fmt, o=out, l=laid_out: digest_case(
                              [exe, "view", path, "--" + v, "--format", f, "-o", o], o, l)))
    for fmt in exports:
        out = os.path.join(tmp, f"export.{fmt}.{abs(hash(rel))}")
        cases.append((f"export-{fmt}/{rel}", lambda f=fmt, o=out: digest_case([exe, "export", path, "--format", f, "-o", o], o)))
    return cases


def global_cases(exe, fixtures, data, tmp):
    cases = []
    r0 = os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz")
    r4 = os.path.join(data, "resnet50_num_workers_4.pt.trace.json.gz")
    cases.append(("validate/resnet50", lambda: json_case([exe, "validate", "--before", r0, "--after", r4, "--format", "json"], tmp)))
    vdir = os.path.join(data, "validation")
    if os.path.isdir(vdir):
        files = sorted(os.listdir(vdir))
        for i, a in enumerate(files):
            for b in files[i + 1:]:
                if os.path.splitext(a)[1] == os.path.splitext(b)[1]:
                    cases.append((f"validate/{a}__{b}", lambda a=a, b=b: json_case(
                        [exe, "validate", "--before", os.path.join(vdir, a), "--after", os.path.join(vdir, b),
                         "--format", "json"], tmp)))
    for name, job in [("ascend-pt-level1", os.path.join(fixtures, "ascend-pt", "level1")),
                      ("kineto-trace_filter", None)]:
        ins = [job] if job else [os.path.join(fixtures, "kineto", f) for f in sorted(os.listdir(os.path.join(fixtures, "kineto")))
                                 if "trace_filter__sampled_rank" in f]
        if not all(os.path.exists(i) for i in ins):
            continue
        ddir = os.path.join(tmp, "digests-" + name)

        def reduce(ins=ins, ddir=ddir):
            rc, _, err = run([exe, "cluster", "map", *ins, "-o", ddir, "--host", "golden"])
            if rc != 0:
                return {"exit": rc, "stderr": err.strip().splitlines()[-1:]}
            return json_case([exe, "cluster", "reduce", ddir], tmp)
        cases.append((f"cluster-reduce/{name}", reduce))
    return cases


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--golden", required=True)
    ap.add_argument("--record", action="store_true")
    ap.add_argument("-k", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    exe = os.path.abspath(a.aiprof)
    a.golden = os.path.abspath(a.golden)
    tmp = tempfile.mkdtemp(prefix="aiprof_golden_")
    try:
        # Inputs are named the same in every checkout ("fixtures/...",
        # "data/..."): outputs that quote the input path (page titles, JSON
        # sources) must not depend on where the repository lies.
        names = os.path.join(tmp, "inputs")
        os.makedirs(names)
        os.symlink(os.path.abspath(a.fixtures), os.path.join(names, "fixtures"))
        os.symlink(os.path.abspath(a.data), os.path.join(names, "data"))
        os.chdir(names)
        cases = global_cases(exe, "fixtures", "data", tmp)
        views, exports = views_and_exports(exe)
        for path in inputs("fixtures", "data"):
            cases += cases_for(exe, path, path, tmp, views, exports)
        cases = [c for c in cases if a.k in c[0]]
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
            results = dict(zip([c[0] for c in cases], pool.map(lambda c: c[1](), cases)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # One file per command kind keeps diffs readable.
    by_file = {}
    for name, value in results.items():
        kind, rel = name.split("/", 1)
        by_file.setdefault(kind, {})[rel] = value
    if a.record:
        os.makedirs(a.golden, exist_ok=True)
        for kind, values in by_file.items():
            path = os.path.join(a.golden, kind + ".json")
            old = json.load(open(path)) if a.k and os.path.exists(path) else {}
            old.update(values)
            with open(path + ".tmp", "w") as f:
                json.dump(old, f, indent=1, sort_keys=True)
                f.write("\n")
            os.replace(path + ".tmp", path)
        print(f"recorded {len(results)} outputs in {a.golden}")
        return 0
    failures = []
    for kind, values in sorted(by_file.items()):
        path = os.path.join(a.golden, kind + ".json")
        expected = json.load(open(path)) if os.path.exists(path) else {}
        for rel, value in sorted(values.items()):
            if rel not in expected:
                failures.append(f"{kind}/{rel}: no golden output (record it with --record)")
            elif json.loads(json.dumps(value)) != expected[rel]:
                want = json.dumps(expected[rel], sort_keys=True)
                got = json.dumps(value, sort_keys=True)
                i = next((i for i in range(min(len(want), len(got))) if want[i] != got[i]), min(len(want), len(got)))
                failures.append(f"{kind}/{rel}: differs at char {i}: expected ...{want[max(0, i - 80):i + 80]}... "
                                f"got ...{got[max(0, i - 80):i + 80]}...")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(results) - len(failures)} of {len(results)} outputs as recorded")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
