#!/usr/bin/env bash
# Builds aiprof and runs its main job on the sample trace shipped in the repo.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAIPROF_BUILD_TESTS=OFF -DAIPROF_BUILD_BENCHMARKS=OFF
cmake --build build --target aiprof
mkdir -p out
./build/aiprof summary test/data/alexnet_a100_kineto.json.gz -o out/summary.txt
./build/aiprof summary test/data/alexnet_a100_kineto.json.gz --format json -o out/summary.json
echo "wrote out/summary.txt and out/summary.json"
cat out/summary.txt
