#!/usr/bin/env bash
# Whole commands with and without the huge-page restart (src/base/huge_pages.h),
# interleaved: each round runs every command both ways, alternating which goes
# first, so a speed change of the VM within the run hits both sides alike.
#   bench/huge_pages.sh build/aiprof large.json large.aiprof [ROUNDS]
set -euo pipefail
AIPROF=$1; JSON=$2; NATIVE=$3; ROUNDS=${4:-3}
printf "%-28s %-4s %8s %8s %8s %10s\n" command thp wall_s cpu_s rss_mb minflt
for r in $(seq "$ROUNDS"); do
  for cmd in "summary $JSON" "analyze $JSON" "analyze $NATIVE" "analyze $NATIVE --only attribution,critical_path"; do
    if [ $((r % 2)) = 1 ]; then order="1 0"; else order="0 1"; fi
    for hp in $order; do
      # shellcheck disable=SC2086
      out=$( { AIPROF_HUGEPAGES=$hp /usr/bin/time -f "%e %U %S %M %R" "$AIPROF" $cmd > /dev/null; } 2>&1 | tail -1)
      read -r wall user sys rss minflt <<< "$out"
      printf "%-28s %-4s %8.2f %8.2f %8.0f %10s\n" "$(basename "${cmd%% *}") $(basename "$(echo "$cmd" | cut -d' ' -f2)")$(echo "$cmd" | grep -q only && echo ' a+cp')" \
        "$hp" "$wall" "$(echo "$user + $sys" | bc)" "$(echo "$rss / 1024" | bc)" "$minflt"
    done
  done
done
