#!/usr/bin/env bash
# Map + reduce of generated N-rank jobs (bench/cluster_job.py, from the
# real HTA Kineto pair): checks that the reduce finds the planted rank and
# op, and prints map and reduce time (wall; reduce CPU too, since wall time
# on a loaded machine is mostly waiting) and the reduce's peak memory (GNU
# time, Debian package "time") per N.
# Usage: [SOURCE=kineto|ascend] bench/cluster_scale.sh AIPROF FIXTURES WORKDIR N...
set -euo pipefail
aiprof=$1 fixtures=$2 work=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
printf "%6s %10s %10s %12s %10s %10s %s\n" ranks map_s reduce_s reduce_cpu_s reduce_MB digests_MB found
for n in "$@"; do
  rm -rf "$work/job$n" "$work/dg$n"
  planted=$(python3 "$here/cluster_job.py" --fixtures "$fixtures" --source "${SOURCE:-kineto}" --ranks "$n" --out "$work/job$n" --seed "$n" | tail -1)
  slow=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['slow_rank'])" "$planted")
  op=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['planted_op'])" "$planted")
  t0=$(date +%s.%N)
  "$aiprof" cluster map "$work/job$n" -o "$work/dg$n" 2>/dev/null
  t1=$(date +%s.%N)
  rm -rf "$work/job$n"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time$n" "$aiprof" cluster reduce "$work/dg$n" -o "$work/cluster$n.json"
  read -r rs ru rsys rkb < "$work/time$n"
  found=$(python3 -c "
import json,sys
d=json.load(open(sys.argv[1])); s=d['slow_ranks']
ok = bool(s) and s[0]['rank']==int(sys.argv[2]) and s[0]['ops'] and s[0]['ops'][0]['name']==sys.argv[3]
print('rank %s op %s' % (s[0]['rank'] if s else None, 'yes' if ok else 'NO'))" "$work/cluster$n.json" "$slow" "$op")
  printf "%6s %10.1f %10s %12s %10.0f %10.1f %s\n" "$n" "$(python3 -c "print($t1 - $t0)")" "$rs" \
    "$(python3 -c "print(round($ru + $rsys, 2))")" "$((rkb / 1024))" \
    "$(du -sm "$work/dg$n" | cut -f1)" "$found (planted rank $slow)"
done
