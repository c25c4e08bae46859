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
(_PythonSampler), in every Python process: perf sees only the interpreter
(_PyEval_EvalFrameDefault), so the monitor's capture puts these stacks in
place of its frames (src/capture/host_trace.cc, the splice `aiprof trace`
uses for its start-up hook's samples) and the incident names the Python
function that took the time. It writes `dir/python/py-<pid>.txt` in the
start-up hook's format (src/capture/torch_hook.py, _AiprofPythonSampler) at
AIPROF_PY_SAMPLE_HZ (200 by default; 0 turns it off) and stops with the
framework layer, before the monitor reads the samples.
"""
import errno
import json
import os
import sys
import threading
import time

_state = {'prof': None, 'sync': [], 'kineto': False, 'sampler': None}

# Distinct stacks kept per deep trace; past it, samples are not written (a
# process whose stacks never repeat must not grow without bound), and the
# count is said on stderr.
_MAX_NODES = 200000


class _PythonSampler:
    """The Python frames of every thread, `hz` times a second, into `path` as
    "F id parent line function<TAB>file" (each distinct stack node once) and
    "S monotonic_ns native_tid node" lines: the format aiprof's capture reads
    (ReadPythonSamples). It needs the GIL, so it sees a busy thread when that
    thread lets the GIL go (every 5 ms switch interval at most)."""

    def __init__(self, path, hz):
        self.period = 1.0 / hz
        self.pid = os.getpid()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.out = open(path, 'w')
        self.nodes = {}
        self.lines = []
        self.dropped = 0
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name='aiprof-pysampler', daemon=True)
        self.thread.start()

    def node(self, frame):
        chain = []
        while frame is not None:
            chain.append(frame)
            frame = frame.f_back
        parent = 0
        for f in reversed(chain):
            code = f.f_code
            key = (parent, code.co_filename, code.co_name, f.f_lineno)
            nid = self.nodes.get(key)
            if nid is None:
                if len(self.nodes) >= _MAX_NODES:
                    return 0
                nid = len(self.nodes) + 1
                self.nodes[key] = nid
                self.lines.append('F %d %d %d %s\t%s\n' % (nid, parent, f.f_lineno or 0,
                                                          code.co_name.replace('\t', ' ').replace('\n', ' '),
                                                          code.co_filename.replace('\t', ' ').replace('\n', ' ')))
            parent = nid
        return parent

    def run(self):
        me = threading.get_ident()
        try:  # the OS thread's name, so that the monitor leaves this thread's samples out of a request's
            import ctypes
            ctypes.CDLL(None).prctl(15, b'aiprof-pysample', 0, 0, 0)  # PR_SET_NAME
        except Exception:
            pass
        next_flush = time.monotonic() + 1.0
        while not self.stopped.is_set() and os.getpid() == self.pid:
            with self.lock:
                now_ns = time.monotonic_ns()
                natives = {t.ident: t.native_id for t in threading.enumerate()}
                for ident, frame in sys._current_frames().items():
                    if ident == me or ident not in natives:
                        continue
                    nid = self.node(frame)
                    if nid == 0:
                        self.dropped += 1
                        continue
                    self.lines.append('S %d %d %d\n' % (now_ns, natives[ident], nid))
                if time.monotonic() >= next_flush:
                    self.flush()
                    next_flush = time.monotonic() + 1.0
            self.stopped.wait(self.period)

    def flush(self):
        if self.lines:
            self.out.write(''.join(self.lines))
            self.out.flush()
            self.lines = []

    def stop(self):
        self.stopped.set()
        self.thread.join(timeout=2.0)
        with self.lock:
            self.flush()
            if self.dropped:
                sys.stderr.write('aiprof: %d Python samples not written for aiprof monitor: more than %d distinct '
                                 'stack nodes\n' % (self.dropped, _MAX_NODES))
            self.out.close()


def _start_sampler(out_dir):
    hz = float(os.environ.get('AIPROF_PY_SAMPLE_HZ', '200') or 0)
    if hz <= 0 or _state['sampler'] is not None:
        return False
    path = os.path.join(out_dir, 'python', 'py-%d.txt' % os.getpid())
    _state['sampler'] = _PythonSampler(path, min(hz, 1000.0))
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
