#!/usr/bin/env python3
"""End-to-end test of aiprof's page-fault layer on a real torch program.

test/capture/page_fault_churn.py (CPU PyTorch, SGD, a fresh, growing 8 MiB
buffer each step; 12 MiB in runs 3 and 4) runs under `aiprof trace --scope
framework`:

1. glibc's default allocator: every buffer is mmapped afresh (about 2,060
   first-touch faults a step). aiprof's per-step fault counts (`analyze
   --only page_faults --format json`, steps from the hook's optimizer.step
   boundaries) are compared, step by step, with the program's own
   getrusage(RUSAGE_SELF).ru_minflt deltas over the same window (the end of
   one optimizer.step to the end of the next; an independent count, by the
   kernel's rusage accounting, not perf). Tolerance per step: 16 faults or
   2%, whichever is larger: the two windows differ by the few microseconds
   between the hook's boundary (inside the wrapped optimizer.step) and the
   program's getrusage call, and the Python work there can take a fault or
   two; perf's software event counts the same minor faults rusage does
   (user and kernel mode: capture.page_faults.kernel must be 'recorded',
   else kernel-mode faults are missing and the check is skipped with a
   reason). The estimated fault time (faults x the cost measured at capture
   start) and its share of the step are recomputed from the steps table;
   page_fault_churn must fire exactly when that share passes the rule's 10%.
   How large it is depends on the machine: 29.6% of the step on CI's VM
   (12.6 us a fault), 3.6-7.6% on session 16's (1.4-1.9 us). What-if outputs
   carry the page-fault note.
2. GLIBC_TUNABLES with fixed thresholds (the "steady" allocator of
   test/data/pairs): the median of the steady steps' faults must be under a
   tenth of run 1's mean, and page_fault_churn must not fire (unless its
   share passes 10%).
3. jemalloc with its default settings (LD_PRELOAD=libjemalloc.so.2) and a
   12 MiB buffer: jemalloc returns every freed block of 8 MiB or more to the
   kernel, so the buffer faults on every step (about 3,070 faults);
   page_fault_churn must fire (on a machine where the share is under 10%,
   with the rule's threshold set to 0 in a copy of its file, --rules), the
   capture must name the allocator (capture.malloc = jemalloc) and the
   evidence say that its decay is on. The report's headline "Best fix" must
   follow the rule ChooseBestFix documents, recomputed from suggest's JSON
   (which fix wins depends on the machine's fault cost).
4. The closed loop: for each allocator suggestion of run 3's finding
   (`aiprof suggest --format json`: jemalloc_retain, caching_allocator), the
   program runs again with that suggestion's `changes` applied as they are
   written (env settings), and the median of its steady steps' faults must
   be under a tenth of run 3's median: the advice aiprof prints works on
   this machine's Debian packages. With jemalloc_retain the mean of the
   later half of the steady steps must be too, and page_fault_churn must
   not fire. tcmalloc settles less surely on this program's buffer, 16 KiB
   larger each step: 3 steps of ~3,100 faults unprofiled; under aiprof
   trace (its profiler's records are allocated between) 7-17 steps in
   three runs, and in a fourth the later half still averaged 1,134 faults a
   step; so for tcmalloc only the median is checked, the rest printed.

  page_faults_e2e_test.py --aiprof BUILD/aiprof --script test/capture/page_fault_churn.py
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

FAILURES = []
STEADY = 'glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432'


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        FAILURES.append(what)


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
    check(p.returncode == 0, ' '.join(cmd[:3]) + ': exit status 0 (got %d)' % p.returncode)
    return p


def section(args, path):
    p = run([args.aiprof, 'analyze', path, '--only', 'page_faults', '--format', 'json'])
    d = json.loads(p.stdout)
    return d['sections']['page_faults']['blocks']


def block(blocks, key):
    for b in blocks:
        if b.get('key') == key:
            return b
    return None


def values(blocks):
    out = {}
    for b in blocks:
        if b.get('type') == 'values':
            out.update({k: v.get('value') for k, v in b['values'].items()})
    return out


def trace(args, tmp, name, tunables, env_set=None, base_mib=None, extra=()):
    env = dict(os.environ)
    for k in ('GLIBC_TUNABLES', 'LD_PRELOAD', 'MALLOC_CONF'):
        env.pop(k, None)
    if tunables:
        env['GLIBC_TUNABLES'] = tunables
    env.update(env_set or {})
    # One torch chunk for the whole run: a chunk export at a step boundary
    # allocates, and its faults would land in a step.
    env['AIPROF_TORCH_CHUNK_STEPS'] = '1000'
    env['AIPROF_TORCH_CHUNK_SECONDS'] = '1000'
    out = os.path.join(tmp, name + '.aiprof')
    p = run([args.aiprof, 'trace', '--scope', 'framework', '-o', out] + list(extra) + ['--', args.python, args.script, str(args.steps)]
            + ([str(base_mib)] if base_mib else []), env=env)
    sys.stderr.write(p.stderr)
    program = []
    for line in p.stdout.splitlines():
        x = line.split()
        if x and x[0] == 'step':
            program.append((int(x[1]), int(x[2]), int(x[3]), int(x[4])))
    check(len(program) == args.steps, '%s: the program ran %d steps (%d)' % (name, args.steps, len(program)))
    return out, program


def metadata(args, path):
    meta = json.loads(run([args.aiprof, 'query', path, 'select key, value from metadata', '--format', 'json']).stdout)
    return {k: v for k, v in meta['rows']}


def steady_median(blocks):
    rows = [r['faults'] for r in (block(blocks, 'steps') or {}).get('rows', []) if r['steady']]
    return sorted(rows)[len(rows) // 2] if rows else None


# The rule's threshold (rules/page_faults.yaml: when "page_fault_ratio > 10%").
RULE_SHARE = 0.10
# Shares this close to the threshold are not used to check whether the rule
# fires: the analysis rounds nothing, but a share printed as 10.0% may be
# 9.999%.
RULE_MARGIN = 0.002


def check_share(blocks, kv, name):
    """The analysis's share of the step, recomputed from its steps table:
    fault time = faults x the measured cost, per steady step; share = mean
    fault time / mean step time. Returns the share. How large it is depends
    on the machine: the cost of a fault was 10-45 us on the VMs of sessions
    11-15 and CI (29.6% of this program's step) and 1.4-1.9 us on the VM of
    session 16 (3.6-7.6% in four captures)."""
    rows = [r for r in (block(blocks, 'steps') or {}).get('rows', []) if r['steady']]
    cost = kv.get('cost_ns') or 0
    check(rows and all(abs(r['fault_ns'] - r['faults'] * cost) <= 1e-6 * max(1.0, r['fault_ns']) for r in rows),
          '%s: each steady step\'s fault time = its faults x %.1f ns' % (name, cost))
    want = (sum(r['fault_ns'] for r in rows) / sum(r['dur_ns'] for r in rows)) if rows else None
    share = kv.get('share') or 0
    check(want is not None and abs(share - want) <= 1e-9 + 1e-6 * want,
          '%s: estimated fault time %.2f%% of the step (recomputed from the steps table: %s)'
          % (name, 100 * share, '%.2f%%' % (100 * want) if want is not None else None))
    return share


def check_fires(found, share, name):
    """page_fault_churn fires exactly when the share passes the rule's 10%."""
    if abs(share - RULE_SHARE) < RULE_MARGIN:
        print('info: %s: share %.3f%% at the rule\'s threshold: whether it fires is not checked' % (name, 100 * share))
    elif share > RULE_SHARE:
        check('page_fault_churn' in found, '%s: page_fault_churn fires (share %.1f%% > 10%%; %s)' % (name, 100 * share, found))
    else:
        check('page_fault_churn' not in found,
              '%s: page_fault_churn does not fire (share %.1f%% <= 10%%: faults are cheap on this machine; %s)'
              % (name, 100 * share, found))


def threshold_zero_rules(tmp):
    """rules/page_faults.yaml with the rule's threshold at 0: on a machine
    where faults are cheap the rule does not fire, and the allocator loop
    needs its suggestions (what they change does not depend on the cost)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'rules', 'page_faults.yaml')
    with open(src) as f:
        text = f.read()
    line = 'when: "page_fault_ratio > 10%"'
    check(text.count(line) == 1, 'rules/page_faults.yaml holds %r once' % line)
    out = os.path.join(tmp, 'page_faults_threshold0.yaml')
    with open(out, 'w') as f:
        f.write(text.replace(line, 'when: "page_fault_ratio > 0%"'))
    return out


def best_fix_expected(sug, best):
    """Checks the report's headline "Best fix" against the rule the report
    documents (src/report/page/report_data.h, ChooseBestFix), recomputed from
    `suggest --format json`: the best measured fix (a simulated or card gain
    above zero) unless the top finding's prior is larger even at its low
    end, then the prior. Which one wins depends on the machine's fault cost,
    so the check is of the rule, and the result is printed."""
    findings = sug.get('findings', [])
    gains = lambda s: s.get('expected_gain', {})
    measured = [s for f in findings for s in f.get('suggestions', [])
                if gains(s).get('source') in ('simulation', 'cards') and gains(s).get('min', 0) > 0]
    top = findings[0] if findings else {}
    priors = [s for s in top.get('suggestions', []) if str(gains(s).get('source', '')).startswith('prior')]
    prior = max(priors, key=lambda s: gains(s).get('max', 0)) if priors else None
    value, detail = best.get('value'), best.get('detail', '')
    by_title = {s['title']: s for s in measured}
    if value in by_title:
        m = gains(by_title[value])
        check(('simulated' in detail or 'card' in detail) and (prior is None or m['max'] >= gains(prior)['min']),
              'best fix %r: a measured gain %.1f%%-%.1f%%, not below the top finding\'s prior %s'
              % (value, 100 * m['min'], 100 * m['max'],
                 '%.1f%%-%.1f%%' % (100 * gains(prior)['min'], 100 * gains(prior)['max']) if prior else None))
    else:
        check(prior is not None and value == prior['title']
              and (not measured or any(gains(s)['max'] < gains(prior)['min'] for s in measured)),
              'best fix %r: the top finding\'s prior, larger at its low end than the first measured fix (measured: %s)'
              % (value, sorted(by_title)))


def allocator_loop(args, tmp):
    """Runs 3 and 4 of the docstring."""
    path, _ = trace(args, tmp, 'jemalloc', None, {'LD_PRELOAD': 'libjemalloc.so.2'}, base_mib=12)
    meta = metadata(args, path)
    check(meta.get('capture.malloc') == 'jemalloc', 'jemalloc: capture.malloc = %s' % meta.get('capture.malloc'))
    check(meta.get('capture.malloc.settings') == 'LD_PRELOAD=libjemalloc.so.2',
          'jemalloc: capture.malloc.settings = %r' % meta.get('capture.malloc.settings'))
    blocks = section(args, path)
    med = steady_median(blocks)
    check(med is not None and med > 2000, 'jemalloc: median %s faults per steady step (> 2000: a 12 MiB buffer, 3,072 pages)' % med)
    share = check_share(blocks, values(blocks), 'jemalloc')
    rules = []
    if share <= RULE_SHARE + RULE_MARGIN:
        print('info: jemalloc: faults are %.1f%% of the step on this machine: the suggestions are taken with the '
              'rule\'s threshold at 0' % (100 * share))
        rules = ['--rules', threshold_zero_rules(tmp)]
    sug = json.loads(run([args.aiprof, 'suggest', path, '--no-calibrate', '--format', 'json'] + rules).stdout)
    finding = next((f for f in sug.get('findings', []) if (f.get('rule') or f.get('id')) == 'page_fault_churn'), None)
    check(finding is not None, 'jemalloc: page_fault_churn fires')
    if finding is None:
        return
    evidence = json.dumps(finding)
    check('allocator: jemalloc with decay on (MALLOC_CONF unset)' in evidence, 'jemalloc: the evidence names the allocator and its decay')
    by_id = {s['id']: s for s in finding.get('suggestions', [])}
    # The process ran jemalloc: the glibc tunable is listed as excluded, with why.
    excl = {e['id']: e['reason'] for e in sug.get('excluded_suggestions', []) if e.get('rule') == 'page_fault_churn'}
    check('glibc_fixed_thresholds' not in by_id and 'malloc_glibc = 0' in excl.get('glibc_fixed_thresholds', ''),
          'jemalloc: glibc_fixed_thresholds excluded (%r)' % excl.get('glibc_fixed_thresholds'))
    # The report's headline "Best fix", from the same session as suggest's.
    rep = os.path.join(tmp, 'jemalloc_report.json')
    run([args.aiprof, 'report', path, '--no-calibrate', '-o', rep] + rules)
    with open(rep) as f:
        best = json.load(f)['sections']['headline']['blocks'][0]['values'].get('best_fix', {})
    for s in finding.get('suggestions', []):
        g = s['expected_gain']
        print('info: jemalloc: %s expected gain %.1f%%-%.1f%% (%s)' % (s['id'], 100 * g.get('min', 0), 100 * g.get('max', 0),
                                                                      g.get('source')))
    print('info: jemalloc: report headline best fix: %s (%s)' % (best.get('value'), best.get('detail')))
    best_fix_expected(sug, best)
    for sid in ('jemalloc_retain', 'caching_allocator'):
        s = by_id.get(sid)
        check(s is not None, '%s: suggested' % sid)
        if s is None:
            continue
        env = {c['setting']: c['value'] for c in s.get('changes', []) if c.get('kind') == 'env'}
        check('LD_PRELOAD' in env, '%s: its changes set LD_PRELOAD (%s)' % (sid, env))
        path2, _ = trace(args, tmp, sid, None, env, base_mib=12)
        meta2 = metadata(args, path2)
        want = 'jemalloc' if sid == 'jemalloc_retain' else 'tcmalloc'
        check(meta2.get('capture.malloc') == want, '%s: capture.malloc = %s' % (sid, meta2.get('capture.malloc')))
        blocks2 = section(args, path2)
        med2 = steady_median(blocks2)
        check(med2 is not None and med is not None and med2 < med / 10,
              '%s applied (%s): median %s faults per steady step, under a tenth of %s' % (sid, env, med2, med))
        rows = [r['faults'] for r in (block(blocks2, 'steps') or {}).get('rows', []) if r['steady']]
        late = rows[len(rows) // 2:]
        late_mean = sum(late) / len(late) if late else None
        if sid == 'jemalloc_retain':
            check(late_mean is not None and med is not None and late_mean < med / 10,
                  '%s applied: mean of the later %d steady steps %s faults, under a tenth of %s' % (sid, len(late), late_mean, med))
        diag = json.loads(run([args.aiprof, 'diagnose', path2, '--no-calibrate', '--format', 'json']).stdout)
        found = [f.get('rule') or f.get('id') for f in diag.get('findings', [])]
        if sid == 'jemalloc_retain':
            # Whether the rule fires rests on this run's own share (its fault
            # time over its step time), as every other fire/no-fire check
            # here: a faster machine shortens the step more than a fault, so
            # the few faults left in the early steady steps could pass 10%.
            # The fault counts above are the fix's criterion.
            check_fires(found, values(blocks2).get('share') or 0, '%s applied' % sid)
        else:
            print('info: %s applied: findings %s; faults per steady step %s' % (sid, found, rows))
        sim = s.get('simulation') or {}
        if sim:
            m2 = json.loads(run([args.aiprof, 'whatif', path2, '--scenario', 'scale aten::fill_ 1', '--format', 'json']).stdout)
            m2 = m2['scenarios'][0] if 'scenarios' in m2 else m2
            print('info: %s: predicted %.2f ms [%.2f, %.2f] per step (median, remove-page-faults on the jemalloc run); '
                  'measured with it applied %.2f ms' % (sid, sim['predicted_step_ms'], sim['predicted_interval_ms'][0],
                                                      sim['predicted_interval_ms'][1], m2['measured_ns'] / 1e6))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--aiprof', required=True)
    ap.add_argument('--script', required=True)
    ap.add_argument('--python', default='/usr/bin/python3')
    ap.add_argument('--steps', type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # 8 MiB (2,048 pages a step): with 4 MiB the fault share fell to 8.7%
        # of a step slowed by ctest -j2, under the rule's 10%.
        path, program = trace(args, tmp, 'default', None, base_mib=8)
        blocks = section(args, path)
        kv = values(blocks)
        meta = json.loads(run([args.aiprof, 'query', path, 'select key, value from metadata', '--format', 'json']).stdout)
        meta = {k: v for k, v in meta['rows']}
        check(meta.get('capture.page_faults') == 'on', 'default: page faults recorded (%s)' % meta.get('capture.page_faults'))
        check(float(meta.get('capture.page_fault_cost_ns', 0)) > 0, 'default: the cost of a fault measured (%s ns)'
              % meta.get('capture.page_fault_cost_ns'))
        # Each repetition of the measurement at capture start: whether the
        # first ones (fresh pages of the VM) cost more than the later ones
        # (pages the kernel recycles, as in the program's steady steps).
        print('info: default: cost of a fault by repetition: %s ns' % meta.get('capture.page_fault_cost_runs_ns'))
        check(meta.get('capture.page_faults.lost_records') == '0', 'default: no fault record lost (%s)'
              % meta.get('capture.page_faults.lost_records'))
        steps = block(blocks, 'steps')
        rows = steps['rows'] if steps else []
        check(len(rows) >= args.steps - 2, 'default: %d steps with fault counts' % len(rows))
        # Match each aiprof step to the program's step whose window starts
        # nearest its start (both CLOCK_MONOTONIC), when nearer than half the
        # shortest gap between the program's step starts (unambiguous). On a
        # loaded machine the thread can be preempted between the hook's
        # boundary and the program's getrusage: beside two busy loops on the 2
        # cores, steps were up to 20.8 ms apart, and a fixed 10 ms left 5 of 28
        # steps uncompared (every compared one agreed within 1 fault).
        compared, worst, offsets = 0, 0, []
        prog_starts = sorted(p[2] for p in program)
        unambiguous = min((b - a for a, b in zip(prog_starts, prog_starts[1:])), default=0) / 2
        if meta.get('capture.page_faults.kernel') != 'recorded':
            print('skip per-step comparison: kernel-mode faults excluded (perf_event_paranoid), rusage counts them')
        else:
            for r in rows:
                start = r['start_ns']
                prog = min(program, key=lambda p: abs(p[2] - start))
                offsets.append(abs(prog[2] - start))
                if abs(prog[2] - start) >= unambiguous:
                    continue
                got, want = r['faults'], prog[1]
                tol = max(16, 0.02 * want)
                worst = max(worst, abs(got - want))
                compared += 1
                check(abs(got - want) <= tol, 'default: step %d: aiprof %d faults, getrusage %d (tolerance %d)'
                      % (r['step'], got, want, tol))
            print('info: default: step starts against the program\'s, ms apart: %s (unambiguous under %.1f)'
                  % (' '.join('%.1f' % (o / 1e6) for o in sorted(offsets)[-6:]), unambiguous / 1e6))
            check(compared >= len(rows) - 1 and compared >= args.steps - 4, 'default: %d steps compared with getrusage (worst |diff| %d)'
                  % (compared, worst))
        per_step = kv.get('faults_per_base') or 0
        check(per_step > 1600, 'default: %.0f faults per steady step (> 1600: a fresh 8 MiB buffer a step)' % per_step)
        share = check_share(blocks, kv, 'default')
        diag = json.loads(run([args.aiprof, 'diagnose', path, '--no-calibrate', '--format', 'json']).stdout)
        found = [f.get('rule') or f.get('id') for f in diag.get('findings', [])]
        check_fires(found, share, 'default')
        w = run([args.aiprof, 'whatif', path, '--scenario', 'scale aten::fill_ 1', '--format', 'json']).stdout
        check('page faults per step' in w and 'the replay keeps them in the ops that took them' in w,
              'default: what-if output carries the page-fault note')

        path2, program2 = trace(args, tmp, 'steady', STEADY, base_mib=8)
        blocks2 = section(args, path2)
        kv2 = values(blocks2)
        per_step2 = kv2.get('faults_per_base')
        # The median over the steady steps: the heap still has to grow by the
        # whole buffer now and then (another allocation sits above its free
        # top), a step of ~1,100 faults in some runs, which moves the mean
        # (seen: 45 and 199 per step) but not the median (4).
        steady_rows = [r['faults'] for r in (block(blocks2, 'steps') or {}).get('rows', []) if r['steady']]
        med2 = sorted(steady_rows)[len(steady_rows) // 2] if steady_rows else None
        check(med2 is not None and med2 < per_step / 10,
              'steady: median %s faults per steady step (mean %s), under a tenth of %.0f' % (med2, per_step2, per_step))
        tail = sorted(p[1] for p in program2[args.steps // 2:])
        check(tail and tail[len(tail) // 2] < per_step / 10, 'steady: the program\'s own median of the later steps '
              '%s faults (getrusage)' % (tail[len(tail) // 2] if tail else None))
        # remove-page-faults on run 1 against run 2 measured (the fix the
        # rule suggests): printed, not checked (one pair, a loaded machine).
        pred = json.loads(run([args.aiprof, 'whatif', path, '--scenario', 'remove-page-faults', '--format', 'json']).stdout)
        meas = json.loads(run([args.aiprof, 'whatif', path2, '--scenario', 'scale aten::fill_ 1', '--format', 'json']).stdout)
        p0, m2 = pred['scenarios'][0] if 'scenarios' in pred else pred, meas['scenarios'][0] if 'scenarios' in meas else meas
        print('info: remove-page-faults on the default run: %.2f ms -> %.2f ms [%.2f, %.2f] per step (median); '
              'the steady-allocator run measured %.2f ms' % (p0['measured_ns'] / 1e6, p0['predicted_ns'] / 1e6,
                                                            p0['predicted_interval_ns'][0] / 1e6,
                                                            p0['predicted_interval_ns'][1] / 1e6, m2['measured_ns'] / 1e6))
        if med2 is not None and per_step > med2:
            print('info: the two runs\' step difference per fault: %.0f ns (median steps, one process each: a rough '
                  'in-program cost against the %s ns measured at capture start)'
                  % ((p0['measured_ns'] - m2['measured_ns']) / (per_step - med2), meta.get('capture.page_fault_cost_ns')))
        diag2 = json.loads(run([args.aiprof, 'diagnose', path2, '--no-calibrate', '--format', 'json']).stdout)
        found2 = [f.get('rule') or f.get('id') for f in diag2.get('findings', [])]
        check_fires(found2, kv2.get('share') or 0, 'steady')

        # --fault-period 4: a record for one fault in four (until session 14
        # the kernel wrote one per fault while the metadata said 4: counts 4x).
        path4, _ = trace(args, tmp, 'period4', None, base_mib=8, extra=('--fault-period', '4'))
        meta4 = metadata(args, path4)
        per4 = values(section(args, path4)).get('faults_per_base') or 0
        check(abs(per4 - per_step) <= 0.1 * per_step, 'period 4: %.0f faults per steady step against %.0f recording every '
              'fault (within 10%%)' % (per4, per_step))
        rec1, rec4 = int(meta.get('capture.page_faults.records', 0)), int(meta4.get('capture.page_faults.records', 0))
        check(0 < rec4 < 0.35 * rec1, 'period 4: %d records against %d recording every fault (under 0.35x)' % (rec4, rec1))

        allocator_loop(args, tmp)
    if FAILURES:
        print('%d check(s) failed' % len(FAILURES))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
