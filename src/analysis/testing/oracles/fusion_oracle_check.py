#!/usr/bin/env python3
"""Runs `aiprof diagnose --format json` (the fusion rule only) and fusion_oracle.py on every Kineto
CPU trace of ../shared/fixtures/torch-cpu and test/data (pairs, llm_cpu) and
compares the fusion figures: fusion_saving_ns (union, per steady step; the
oracle is told the warm-up step count aiprof left out, nothing else),
fusion_candidate_ratio, small_op_ratio, fusion_candidate_occurrences_per_step.
Legacy-format files and files without "cpu_op" events are out of the
oracle's scope: listed as skipped, never compared.

Usage: fusion_oracle_check.py AIPROF [--fixtures DIR] [--memory-bound-any-length]
(DIR: the fixtures folder holding torch-cpu/; default ../shared/fixtures)
(the flag: the oracle's proposed CPU run rule, for a binary built with it).
Exit 1 on any disagreement, 2 when no trace was compared.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..'))


def traces(fixtures):
    pats = [os.path.join(fixtures, 'torch-cpu', '*.kineto.json'),
            os.path.join(ROOT, 'test', 'data', 'pairs', '*.pt.trace.json.gz'),
            os.path.join(ROOT, 'test', 'data', 'llm_cpu', '*.pt.trace.json.gz')]
    return sorted(f for p in pats for f in glob.glob(p))


def main():
    args = sys.argv[1:]
    fixtures = os.path.join(ROOT, '..', 'shared', 'fixtures')
    if '--fixtures' in args:
        k = args.index('--fixtures')
        fixtures = args[k + 1]
        del args[k:k + 2]
    aiprof, flags = args[0], args[1:]
    if not glob.glob(os.path.join(fixtures, 'torch-cpu', '*.kineto.json')):
        sys.exit(f'{fixtures}/torch-cpu: no *.kineto.json (give --fixtures DIR)')
    env = dict(os.environ, AIPROF_CALIBRATE='0', XDG_CONFIG_HOME=tempfile.mkdtemp(),
               XDG_DATA_HOME=tempfile.mkdtemp())
    compared = bad = 0
    for f in traces(fixtures):
        name = os.path.basename(f)
        # Only the fusion rule: the metrics are the analyses', and a rule file
        # another change adds (a metric this binary lacks) must not stop it.
        run = subprocess.run([aiprof, 'diagnose', '--format', 'json', '--no-builtin-rules', '--rules',
                              os.path.join(ROOT, 'rules', 'fusion_missing.yaml'), f], env=env, capture_output=True,
                             text=True)
        if run.returncode:
            sys.exit(f'{aiprof} diagnose {f}: exit {run.returncode}: {run.stderr.strip()}')
        d = json.loads(run.stdout)
        m = d['metrics']

        def v(k):
            x = m.get(k)
            return x.get('value') if isinstance(x, dict) else x

        pr = subprocess.run([sys.executable, os.path.join(HERE, 'fusion_oracle.py'), f, '--warmup',
                             str(int(v('warmup_steps') or 0))] + flags, capture_output=True, text=True)
        if pr.returncode:
            print(f'skipped {name}: {pr.stderr.strip()}')
            continue
        o = json.loads(pr.stdout)
        op = o['op_time_ns']
        want = {
            'fusion_saving_ns': o['steady_union_saving_per_step_ns'] if o['steps'] else o['union_saving_ns'],
            'fusion_candidate_ratio': o['covered_ns'] / op,
            'small_op_ratio': o['short_op_ns'] / op,
            'fusion_candidate_occurrences_per_step':
                (o['top'][0]['occurrences'] if o['top'] else 0) / o['steps'] if o['steps'] else None,
        }
        compared += 1
        before = bad
        for k, w in want.items():
            got = v(k)
            if w is None:
                continue
            tol = 1.0 if k == 'fusion_saving_ns' else 1e-9  # ns: the per-step mean is rounded
            if got is None or abs(got - w) > tol:
                bad += 1
                print(f'DIFF {name} {k}: aiprof {got} oracle {w}')
        if bad == before:
            print(f'ok   {name}')
    print(f'{compared} traces compared, {bad} disagreements')
    sys.exit(1 if bad else 2 if compared == 0 else 0)


if __name__ == '__main__':
    main()
