#!/usr/bin/env python3
"""docs/metrics.md documents exactly the metric catalogue.

The catalogue (src/analysis/metrics/metric_catalogue.cc and each
analysis's own metrics in its spec file, src/analysis/<folder>/*_analysis.cc,
one `{"name", U::kUnit, "meaning"}` entry a line) is the list of metrics the
analyses may publish and rules may name; its header says docs/metrics.md
documents the same list. Every catalogued name must be in the first column
of a row of one of docs/metrics.md's tables (a row may name several,
separated by commas; a trailing "(new)" is ignored), and every name there
must be catalogued. A metric added to the catalogue without its row, or a
row left for a metric that was renamed or removed, fails here with the name.
"""
import argparse
import glob
import os
import re
import sys

ENTRY = re.compile(r'^\s*\{\s*"([a-z][a-z0-9_]*)"\s*,\s*U::', re.M)
ROW = re.compile(r"^\|([^|]+)\|")


def catalogue_names(root):
    paths = [os.path.join(root, "src/analysis/metrics/metric_catalogue.cc")]
    paths += sorted(glob.glob(os.path.join(root, "src/analysis/*/*_analysis.cc")))
    names = set()
    for path in paths:
        with open(path, encoding="utf-8") as f:
            names |= set(ENTRY.findall(f.read()))
    return names


def documented_names(path):
    names = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = ROW.match(line)
            if not m:
                continue
            for cell in m.group(1).split(","):
                cell = cell.strip().replace("(new)", "").strip().strip("`")
                if re.fullmatch(r"[a-z][a-z0-9_]*", cell) and cell != "metric":
                    names.setdefault(cell, n)
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="the source tree")
    a = ap.parse_args()
    cat = catalogue_names(a.root)
    doc = documented_names(os.path.join(a.root, "docs/metrics.md"))
    if len(cat) < 50:
        print(f"FAIL: read only {len(cat)} metrics from the catalogue: its layout changed, fix this test")
        return 1
    failures = []
    for name in sorted(cat - set(doc)):
        failures.append(f"docs/metrics.md: no row for catalogued metric '{name}'")
    for name in sorted(set(doc) - cat):
        failures.append(f"docs/metrics.md:{doc[name]}: '{name}' is not in the catalogue")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(cat)} catalogued metrics, {len(doc)} documented, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
