#!/usr/bin/env python3
"""The published JSON schemas name every key the program writes.

Runs aiprof on shipped traces and collects every object key of its JSON
outputs (recursively; the keys of maps whose keys are data, such as
`events_by_category` or `metrics`, are left out), then checks that each key
is named in its schema page: docs/summary-schema.md (`summary --format
json`), docs/diagnosis-schema.md (`diagnose --format json`),
docs/validation.md (`validate -o x.json`, traces on both sides, so the
prediction check is there) and docs/suggestions-schema.md (`suggest --format
suggestions-json`, the same document as the YAML). A key is named when the
page has it quoted (`"key"`), as a YAML key (`key:`) or in backticks,
anywhere on the page (so a key documented under another object passes: the
check is that no key goes unmentioned, not where).
Values and figures are not compared, so a changed figure never fails here; a
key added to an output without its schema line does, naming the output, the
key and where it sits."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# Paths (as collected below) whose object's keys are data, not schema.
DATA_MAPS = {
    ".events_by_category", ".diagnostics", ".step_breakdown[].values_us",  # summary
    ".metrics",  # diagnosis: one key per metric (docs/metrics.md)
}


def collect(obj, path="", out=None):
    """{key: first path it was seen at} over every object in obj."""
    if out is None:
        out = {}
    if isinstance(obj, dict):
        if path in DATA_MAPS:
            for v in obj.values():
                collect(v, path + ".*", out)
            return out
        for k, v in obj.items():
            out.setdefault(k, path or ".")
            collect(v, path + "." + k, out)
    elif isinstance(obj, list):
        for v in obj:
            collect(v, path + "[]", out)
    return out


def named_in(page_text, key):
    k = re.escape(key)
    return re.search(r'"%s"|`%s`|(^|[\s{,])%s:' % (k, k, k), page_text, re.M) is not None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aiprof", required=True)
    ap.add_argument("--root", required=True, help="the source tree")
    ap.add_argument("--fixtures", required=True, help="../shared/fixtures")
    a = ap.parse_args()
    data = os.path.join(a.root, "test", "data")
    env = dict(os.environ, AIPROF_CALIBRATE="0")
    tmp = tempfile.mkdtemp(prefix="aiprof_schema_keys_")
    env["XDG_DATA_HOME"] = env["XDG_CONFIG_HOME"] = tmp  # no knowledge cards of the user's
    r0 = os.path.join(data, "resnet50_num_workers_0.pt.trace.json.gz")
    r4 = os.path.join(data, "resnet50_num_workers_4.pt.trace.json.gz")
    level1 = os.path.join(a.fixtures, "ascend-pt", "level1")
    cases = [
        ("summary-schema.md", ["summary", level1, "--format", "json"]),
        ("summary-schema.md", ["summary", os.path.join(data, "alexnet_a100_kineto.json.gz"), "--format", "json"]),
        ("diagnosis-schema.md", ["diagnose", level1, "--format", "json"]),
        ("diagnosis-schema.md", ["suggest", r0, "--format", "json"]),
        ("validation.md", ["validate", "--before", r0, "--after", r4, "--format", "json"]),
        ("suggestions-schema.md", ["suggest", r0, "--format", "suggestions-json"]),
    ]
    failures, checked = [], 0
    for page, args in cases:
        with open(os.path.join(a.root, "docs", page), encoding="utf-8") as f:
            text = f.read()
        p = subprocess.run([a.aiprof, *args], capture_output=True, text=True, timeout=300, env=env)
        if p.returncode != 0:
            failures.append("aiprof %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[:300]))
            continue
        keys = collect(json.loads(p.stdout))
        checked += len(keys)
        for key, where in sorted(keys.items()):
            if not named_in(text, key):
                failures.append("docs/%s does not name key '%s' (at %s) of `aiprof %s`" % (page, key, where, args[0]))
    for f in failures:
        print("FAIL:", f)
    print("%d keys checked in %d outputs, %d failures" % (checked, len(cases), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
