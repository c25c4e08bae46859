"""The framework layer on demand, for aiprof monitor's deep trace.

When `aiprof monitor` takes a deep trace of a Python process that uses the
aiprof SDK, the runtime asks (through its live channel) for the framework
layer: `handle(True, dir)` starts torch.profiler in the process's main thread,
`handle(False, dir)` stops it and writes `dir/torch-<pid>.json` and its
clock-sync marks `dir/torch-<pid>.sync`, the same files and marks as
aiprof trace's start-up hook (src/capture/torch_hook.py), which the monitor
imports and aligns the same way. A process that has not imported torch
answers ENOTSUP for torch: torch is never imported here.

The same request starts a sampler of the process's Python frames
(aiprof/_pysampler.py, shared with aiprof trace's start-up hook), in every Python process: perf sees only the interpreter
(_PyEval_EvalFrameDefault), so the monitor's capture puts these stacks in
place of its frames (src/capture/host_trace.cc, the splice `aiprof trace`
uses for its start-up hook's samples) and the incident names the Python
function that took the time. It writes `dir/python/py-<pid>.txt` in the
start-up hook's format at
AIPROF_PY_SAMPLE_HZ (200 by default; 0 turns it off) and stops with the
framework layer, before the monitor reads the samples.
"""
import errno
import json
import os
import sys
import threading
import time

from aiprof._pysampler import PythonSampler

_state = {'prof': None, 'sync': [], 'kineto': False, 'sampler': None}

def _start_sampler(out_dir):
    hz = float(os.environ.get('AIPROF_PY_SAMPLE_HZ', '200') or 0)
    if hz <= 0 or _state['sampler'] is not None:
        return False
    path = os.path.join(out_dir, 'python', 'py-%d.txt' % os.getpid())
    _state['sampler'] = PythonSampler(path, min(hz, 1000.0))
    return True


def _stop_sampler():
    sampler, _state['sampler'] = _state['sampler'], None
    if sampler is None:
        return False
    sampler.stop()
    return True


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
    """Called on the main thread by the SDK; returns 0 or an errno value:
    0 when the Python sampler or torch.profiler started (stopped)."""
    sampled = False
    try:
        sampled = _start_sampler(out_dir) if start else _stop_sampler()
    except Exception as e:  # the service runs on without Python frames
        sys.stderr.write('aiprof: Python frames for aiprof monitor: %s\n' % e)
        _state['sampler'] = None
    try:
        status = _start() if start else _stop(out_dir)
    except Exception as e:  # the service runs on without the framework layer
        sys.stderr.write('aiprof: framework layer for aiprof monitor: %s\n' % e)
        _state['prof'] = None
        status = errno.EIO
    return 0 if sampled else status
