"""The framework layer on demand, for aiprof monitor's deep trace.

When `aiprof monitor` takes a deep trace of a Python process that uses the
aiprof SDK, the runtime asks (through its live channel) for the framework
layer: `handle(True, dir)` starts torch.profiler in the process's main thread,
`handle(False, dir)` stops it and writes `dir/torch-<pid>.json` and its
clock-sync marks `dir/torch-<pid>.sync`, the same files and marks as
aiprof trace's start-up hook (src/capture/torch_hook.py), which the monitor
imports and aligns the same way. A process that has not imported torch
answers ENOTSUP: torch is never imported here.
"""
import errno
import json
import os
import sys
import threading
import time

_state = {'prof': None, 'sync': [], 'kineto': False}


def _mark(count):
    from torch.profiler import record_function
    for _ in range(count):
        name = 'aiprof::clock_sync#%d' % len(_state['sync'])
        t0 = time.monotonic_ns()
        with record_function(name):
            pass
        t1 = time.monotonic_ns()
        _state['sync'].append({'name': name, 'mono_begin_ns': t0, 'mono_end_ns': t1})


def _start():
    torch = sys.modules.get('torch')
    if torch is None:
        return errno.ENOTSUP
    if _state['prof'] is not None:
        return errno.EBUSY
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    _state['kineto'] = bool(getattr(torch.autograd, 'kineto_available', lambda: False)())
    _state['sync'] = []
    prof = profile(activities=activities, record_shapes=True)
    prof.__enter__()
    _state['prof'] = prof
    _mark(5)
    return 0


def _write_events(prof, path, main_tid):
    # Without Kineto (Debian's torch) the legacy export loses shapes and
    # thread ids: the events are written here, as the start-up hook does.
    events = prof.events()
    sync_threads = {e.thread for e in events if e.name.startswith('aiprof::clock_sync#')}
    out = []
    for e in events:
        tid = main_tid if e.thread in sync_threads else -int(e.thread)
        ev = {'name': e.name, 'ph': 'X', 'cat': 'cpu_op', 'pid': os.getpid(), 'tid': tid,
              'ts': e.time_range.start, 'dur': e.time_range.end - e.time_range.start, 'args': {}}
        if e.input_shapes:
            ev['args']['Input Dims'] = e.input_shapes
        out.append(ev)
    with open(path, 'w') as f:
        json.dump({'traceEvents': out, 'displayTimeUnit': 'ns'}, f)


def _stop(out_dir):
    prof = _state['prof']
    if prof is None:
        return errno.EINVAL
    torch = sys.modules['torch']
    _mark(5)
    prof.__exit__(None, None, None)
    _state['prof'] = None
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.join(out_dir, 'torch-%d' % os.getpid())
    main_tid = threading.get_native_id()
    if _state['kineto']:
        prof.export_chrome_trace(base + '.json.tmp')
        kind = 'kineto'
    else:
        _write_events(prof, base + '.json.tmp', main_tid)
        kind = 'legacy_events'
    os.replace(base + '.json.tmp', base + '.json')
    meta = {'pid': os.getpid(), 'main_tid': main_tid, 'sync': _state['sync'], 'format': kind,
            'torch': torch.__version__, 'on_demand': True}
    with open(base + '.sync.tmp', 'w') as f:
        json.dump(meta, f)
    os.replace(base + '.sync.tmp', base + '.sync')
    return 0


def handle(start, out_dir):
    """Called on the main thread by the SDK; returns 0 or an errno value."""
    try:
        return _start() if start else _stop(out_dir)
    except Exception as e:  # the service runs on without the framework layer
        sys.stderr.write('aiprof: framework layer for aiprof monitor: %s\n' % e)
        _state['prof'] = None
        return errno.EIO
