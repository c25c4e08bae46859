#!/usr/bin/env bash
# Builds aiprof and runs its main job on the sample trace shipped in the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAIPROF_BUILD_TESTS=OFF -DAIPROF_BUILD_BENCHMARKS=OFF
cmake --build build --target aiprof
mkdir -p out
SAMPLE=test/data/alexnet_a100_kineto.json.gz
./build/aiprof summary "$SAMPLE" -o out/summary.txt
./build/aiprof summary "$SAMPLE" --format json -o out/summary.json
./build/aiprof suggest "$SAMPLE" --target latency -o out/report.html
./build/aiprof suggest "$SAMPLE" --target latency -o out/report.md
echo "wrote out/summary.txt, out/summary.json, out/report.html and out/report.md"
./build/aiprof suggest "$SAMPLE" --target latency
