#!/usr/bin/env bash
# What the attribution tree and the critical path add to a command, end to end
# (issue 22 item 5): `summary` against `analyze --only attribution,critical_path`
# on the same input, interleaved (the order alternates each round), CPU time
# (user + sys) and wall.
#   bench/attribution_cost.sh build/aiprof large.json [ROUNDS]
set -euo pipefail
AIPROF=$1; IN=$2; ROUNDS=${3:-3}
printf "%-40s %8s %8s %8s\n" command wall_s cpu_s rss_mb
for r in $(seq "$ROUNDS"); do
  a=(summary "$IN"); b=(analyze "$IN" --only attribution,critical_path)
  if [ $((r % 2)) = 0 ]; then t=("${a[@]}"); a=("${b[@]}"); b=("${t[@]}"); fi
  for cmd in "${a[*]}" "${b[*]}"; do
    # shellcheck disable=SC2086
    out=$( { /usr/bin/time -f "%e %U %S %M" "$AIPROF" $cmd > /dev/null; } 2>&1 | tail -1)
    read -r wall user sys rss <<< "$out"
    printf "%-40s %8.2f %8.2f %8.0f\n" "$(echo "$cmd" | sed "s#$IN#IN#")" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)"
  done
done
