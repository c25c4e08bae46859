#!/usr/bin/env python3
"""Cost of the torch op layer with `aiprof trace --torch-every N`.

Runs bench/torch_train_loop.py (a small CNN on CPU torch, fixed wall time)
bare and under `aiprof trace --scope framework --cpu-hz 0` with
--torch-every 1 and N, alternately, ROUNDS times; the figure is the number
the target's own CPU time per training step (profiled steps and the hook's
exports included; CPU time, not wall time: the 2-core VM is shared), as a
ratio to the bare run of the same round.

  capture_torch_every.py BUILD_DIR [SECONDS=15] [ROUNDS=2] [N=10]
"""
import os
import statistics
import subprocess
import sys
import tempfile

build = sys.argv[1]
seconds = sys.argv[2] if len(sys.argv) > 2 else '15'
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2
n = sys.argv[4] if len(sys.argv) > 4 else '10'
loop = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'torch_train_loop.py')
aiprof = os.path.join(build, 'aiprof')


def steps(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return float(next(line for line in out.splitlines() if line.startswith('steps ')).split()[-1])


ratios = {'every 1': [], 'every ' + n: []}
with tempfile.TemporaryDirectory() as tmp:
    for r in range(rounds):
        bare = steps(['/usr/bin/python3', loop, seconds])
        got = {}
        for every in ('1', n):
            out = os.path.join(tmp, 'every-%s-%d.aiprof' % (every, r))
            got[every] = steps([aiprof, 'trace', '-o', out, '--scope', 'framework', '--cpu-hz', '0', '--torch-every',
                                every, '--', '/usr/bin/python3', loop, seconds])
        print('round %d: CPU ms per step: bare %.2f, --torch-every 1: %.2f, --torch-every %s: %.2f'
              % (r + 1, bare, got['1'], n, got[n]))
        ratios['every 1'].append(got['1'] / bare)
        ratios['every ' + n].append(got[n] / bare)
for k, v in ratios.items():
    print('%s: CPU per step relative to bare, median of %d rounds (%s s each): %.3f (%s)'
          % (k, rounds, seconds, statistics.median(v), ', '.join('%.3f' % x for x in v)))
