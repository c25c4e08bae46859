#!/usr/bin/env bash
# Builds aiprof and runs its main job, the closed loop measure -> diagnose ->
# suggest -> validate, on real traces shipped in the repo: one ResNet50
# training job profiled with DataLoader(num_workers=0) and again with
# num_workers=4 (test/data/resnet50_num_workers_{0,4}.pt.trace.json.gz).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAIPROF_BUILD_TESTS=OFF -DAIPROF_BUILD_BENCHMARKS=OFF
cmake --build build --target aiprof
mkdir -p out
BEFORE=test/data/resnet50_num_workers_0.pt.trace.json.gz
AFTER=test/data/resnet50_num_workers_4.pt.trace.json.gz
# The knowledge cards of this job go to a database in out/, not the user's.
DB=out/knowledge.db
rm -f "$DB"
# 1. measure + diagnose + suggest: the report a person reads, and its text forms.
./build/aiprof report "$BEFORE" --target latency --db "$DB" -o out/analysis.html
./build/aiprof report "$BEFORE" --target latency --db "$DB" -o out/analysis.md
./build/aiprof summary "$BEFORE" -o out/summary.txt
./build/aiprof suggest "$BEFORE" --target latency --db "$DB" -o out/suggestions.md
# The suggestions as a file a tool reads next (aiprof.suggestions/1).
./build/aiprof suggest "$BEFORE" --target latency --db "$DB" --format yaml -o out/suggestions.yaml
# 2. validate the fix (num_workers=4) against the run before it.
./build/aiprof validate --before "$BEFORE" --after "$AFTER" -o out/validation.html
./build/aiprof validate --before "$BEFORE" --after "$AFTER" -o out/validation.md
./build/aiprof report "$AFTER" --before "$BEFORE" --db "$DB" -o out/after.html
# 3. keep what the fix measured as a knowledge card, so later suggestions cite it.
./build/aiprof card --before "$BEFORE" --after "$AFTER" --bottleneck data_loading \
  --fix "DataLoader(num_workers=4)" --db "$DB" -o out/card.md
if command -v chromium >/dev/null; then
  ./build/aiprof report "$BEFORE" --target latency --db "$DB" -o out/analysis.pdf
fi
echo "wrote out/analysis.html (and .md/.pdf), out/suggestions.yaml, out/validation.html, out/after.html, out/card.md"
./build/aiprof suggest "$BEFORE" --target latency --db "$DB"
./build/aiprof validate --before "$BEFORE" --after "$AFTER"
