#!/usr/bin/env python3
"""End-to-end check of `aiprof report` (HTML, Markdown, PDF) and of the
machine-readable suggestions on the real ResNet50 num_workers=0/4 pair.

Figures are recomputed here from the trace JSON (ProfilerStep#N durations),
independently of aiprof; the PDF is read back with poppler-utils (pdftotext
finds the headline figures, pdftoppm renders the first page)."""
import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import yaml


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def step_durations_ms(path):
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [e["dur"] / 1000.0 for e in events
            if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--data", required=True)
    a = ap.parse_args()
    before = os.path.join(a.data, "resnet50_num_workers_0.pt.trace.json.gz")
    after = os.path.join(a.data, "resnet50_num_workers_4.pt.trace.json.gz")
    failures = []

    def check(cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            failures.append(what)

    steps = step_durations_ms(before)
    mean = statistics.fmean(steps)
    with tempfile.TemporaryDirectory() as d:
        html, md, pdf = (os.path.join(d, n) for n in ("analysis.html", "report.md", "report.pdf"))
        run([a.aiprof, "report", before, "-o", html])
        run([a.aiprof, "report", before, "-o", md])
        run([a.aiprof, "report", before, "-o", pdf])
        page = open(html, encoding="utf-8").read()
        figure = f"{mean:.2f} ms"
        check(figure in page, f"HTML headline has the mean step time {figure} (6 steps from the JSON)")
        check(page.count("<svg class=\"chart\"") >= 4, "HTML has the charts (breakdown, steps, gaps, roofline, memory)")
        check("The step waits for input data" in page, "HTML leads with the data-loading finding")
        check("<script src" not in page and "<link" not in page, "HTML loads nothing from outside")
        text = open(md, encoding="utf-8").read()
        check(figure in text and "## Diagnosis and suggestions" in text, "Markdown has the same headline and sections")
        pdftext = run(["pdftotext", "-layout", pdf, "-"]).stdout
        check(figure in pdftext, "pdftotext finds the mean step time in the PDF")
        check("Load data in parallel" in pdftext, "pdftotext finds the best fix in the PDF")
        run(["pdftoppm", "-r", "30", "-f", "1", "-l", "1", "-png", pdf, os.path.join(d, "page")])
        pngs = [n for n in os.listdir(d) if n.startswith("page") and n.endswith(".png")]
        check(len(pngs) == 1 and os.path.getsize(os.path.join(d, pngs[0])) > 1000, "pdftoppm renders page 1")

        # With --before: the validation section, verdict per metric.
        vhtml = os.path.join(d, "validation.html")
        run([a.aiprof, "report", after, "--before", before, "-o", vhtml])
        vpage = open(vhtml, encoding="utf-8").read()
        vsec = vpage[vpage.find("<section id=\"validation\">"):]
        check("<section id=\"validation\">" in vpage and any(v in vsec for v in ("improved", "regressed", "no significant change")),
              "report --before has the validation with verdicts")
        check("Per-op before/after" in vsec, "report --before has the per-op before/after")

        # JSON carries the diagnosis and the validation as data (their own
        # schemas), not only as prose in the sections.
        vjson = os.path.join(d, "validation.json")
        run([a.aiprof, "report", after, "--before", before, "--fix-id", "dataloader_workers", "-o", vjson])
        rj = json.load(open(vjson, encoding="utf-8"))
        dj = json.loads(run([a.aiprof, "suggest", after, "--format", "json"]).stdout)
        check("sections" in rj and rj.get("diagnosis", {}).get("schema") == dj.get("schema"),
              "report JSON keeps its sections and carries the diagnosis (%s)" % rj.get("diagnosis", {}).get("schema"))
        check(rj.get("diagnosis", {}).get("findings") == dj.get("findings"),
              "report JSON's findings and suggestions equal suggest --format json's")
        pred = rj.get("validation", {}).get("prediction") or {}
        check(rj.get("validation", {}).get("schema") == "aiprof.validation/1" and "predicted_interval_ms" in pred
              and "measured_interval_ms" in pred,
              "report JSON carries the validation's prediction check with both intervals: %s" % sorted(pred))

        # report --before validates as `aiprof validate` does (one sequence,
        # src/session/validate_runs.h): on a pair whose fix cannot be
        # inferred, its validation is validate's document, the note saying why
        # included (report left it out before).
        pb = os.path.join(a.data, "pairs", "defensive_clone_before.pt.trace.json.gz")
        pa = os.path.join(a.data, "pairs", "defensive_clone_after.pt.trace.json.gz")
        pjson = os.path.join(d, "pair.json")
        run([a.aiprof, "report", pa, "--before", pb, "-o", pjson])
        rv = json.load(open(pjson, encoding="utf-8")).get("validation")
        vv = json.loads(run([a.aiprof, "validate", "--before", pb, "--after", pa, "--format", "json"]).stdout)
        check(rv == vv and any("could not be inferred" in n for n in vv.get("notes", [])),
              "report --before's validation equals aiprof validate's, the note on the fix included: %s"
              % [n for n in (vv.get("notes", []) + (rv or {}).get("notes", [])) if n not in (rv or {}).get("notes", [])
                 or n not in vv.get("notes", [])])

        # Machine-readable suggestions: YAML and JSON say the same, and the
        # data-loading fix names DataLoader(num_workers).
        y = os.path.join(d, "atc_opt_suggestion.yaml")
        run([a.aiprof, "suggest", before, "--format", "yaml", "-o", y])
        doc = yaml.safe_load(open(y, encoding="utf-8"))
        js = json.loads(run([a.aiprof, "suggest", before, "--format", "suggestions-json"]).stdout)
        check(doc == js, "YAML and suggestions-json carry the same document")
        check(doc["schema"] == "aiprof.suggestions/1", "schema is versioned")
        first = doc["suggestions"][0]
        check(first["answers"]["finding"] == "data_loading" and first["answers"]["confidence"] == "high",
              "first suggestion answers the high-confidence data-loading finding")
        settings = [c["setting"] for c in first["changes"]]
        check("torch.utils.data.DataLoader(num_workers)" in settings, "its changes name DataLoader(num_workers)")
        check(0 < first["expected_gain"]["min"] <= first["expected_gain"]["max"] < 1
              and first["expected_gain"]["of"], "expected gain is a range with its time base")

        # A hand-made trace with one 1 MiB op name (three calls): before the
        # name was cut for people, Chromium ran past its 120 s printing this
        # report's PDF and report.txt held the name on every row that showed it.
        # The steps are named "ProfilerStep#" and 1 MiB more too (drawn under
        # the step chart's bars and in its tooltips).
        huge = "aten::addmm" + "A" * (1 << 20)
        long_trace = os.path.join(d, "long.json")
        events = []
        for i in range(3):
            events.append({"ph": "X", "name": "ProfilerStep#" + "B" * (1 << 20), "cat": "user_annotation", "pid": 1,
                           "tid": 1, "ts": 100 * i, "dur": 90})
            events.append({"ph": "X", "name": huge, "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 100 * i + 10, "dur": 50})
        with open(long_trace, "w") as f:
            json.dump({"traceEvents": events}, f)
        lpdf, ltxt, ljson = (os.path.join(d, n) for n in ("long.pdf", "long.txt", "long.json.out.json"))
        p = subprocess.run([a.aiprof, "report", long_trace, "-o", lpdf], capture_output=True, text=True, timeout=200)
        check(p.returncode == 0 and os.path.getsize(lpdf) > 0, "a 1 MiB op name: the PDF is printed (%s)" % p.stderr[-300:])
        if p.returncode == 0:
            # The cut name wraps inside its box (it ran past the page's edge
            # before), so its remark may span lines: compared with the
            # whitespace collapsed.
            check(f"{len(huge)} bytes in all" in " ".join(run(["pdftotext", lpdf, "-"]).stdout.split()),
                  "the PDF shows the name cut, with its length")
        run([a.aiprof, "report", long_trace, "-o", ltxt])
        check(os.path.getsize(ltxt) < 500_000, "report.txt stays small (%d bytes)" % os.path.getsize(ltxt))
        lhtml = os.path.join(d, "long.html")
        run([a.aiprof, "report", long_trace, "-o", lhtml])
        page = open(lhtml, encoding="utf-8").read()
        svgs = re.findall(r"<svg class=\"chart\".*?</svg>", page, re.S)
        check(svgs and max(len(x) for x in svgs) < 100_000, "every chart's drawing stays small (labels cut): %s bytes"
              % [len(x) for x in svgs])
        summary = json.loads(run([a.aiprof, "summary", long_trace, "--format", "json"]).stdout)
        check(any(o.get("name") == huge for o in summary.get("ops", [])), "the JSON keeps the whole name")

        # Bad output name: a clear error, non-zero exit, nothing written.
        p = subprocess.run([a.aiprof, "report", before, "-o", os.path.join(d, "x.docx")], capture_output=True, text=True)
        check(p.returncode != 0 and "x.docx" in p.stderr, "unknown report extension is an error naming the file")
    print(f"{len(failures) == 0 and 'PASS' or 'FAIL'}: {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
