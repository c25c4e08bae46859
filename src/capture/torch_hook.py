# aiprof trace: the framework-layer start-up hook. aiprof writes this file as
# sitecustomize.py into a temporary folder put first on PYTHONPATH; it changes
# no user code. When the program imports torch, torch.profiler starts (CPU ops
# with shapes; CUDA through CUPTI when available; torch_npu.profiler when
# importable) and at exit the ops are written to $AIPROF_CAPTURE_DIR/torch/,
# with clock-sync marks (record_function spans timed with time.monotonic_ns,
# the SDK's and perf's CLOCK_MONOTONIC) from which aiprof measures the
# profiler's clock offset.
import os
import sys


def _aiprof_chain_original():
    # Run the sitecustomize this one hides (Debian ships one in /etc/python3.X).
    import importlib.machinery
    import importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p for p in sys.path if os.path.abspath(p or '.') != here]
    spec = importlib.machinery.PathFinder.find_spec('sitecustomize', path)
    if spec is not None and spec.origin and os.path.abspath(spec.origin) != os.path.abspath(__file__):
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


class _AiprofTorchProfiler:
    def __init__(self, torch):
        import threading
        import time
        self.torch = torch
        self.time = time
        self.out_dir = os.path.join(os.environ['AIPROF_CAPTURE_DIR'], 'torch')
        self.sync = []
        self.main_tid = threading.get_native_id()
        self.pid = os.getpid()
        self.stopped = False
        from torch.profiler import ProfilerActivity, profile
        activities = [ProfilerActivity.CPU]
        want_cuda = os.environ.get('AIPROF_CAPTURE_CUDA', '1') == '1'
        if want_cuda and torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        self.activities = [str(a) for a in activities]
        self.kineto = bool(getattr(torch.autograd, 'kineto_available', lambda: False)())
        self.npu = None
        try:
            import torch_npu  # noqa: F401
            self.npu = torch_npu
        except Exception:
            pass
        if self.npu is not None:
            self.prof = self.npu.profiler.profile(record_shapes=True)
        else:
            self.prof = profile(activities=activities, record_shapes=True)
        self.prof.__enter__()
        self.mark(5)

    def mark(self, count):
        from torch.profiler import record_function
        for _ in range(count):
            name = 'aiprof::clock_sync#%d' % len(self.sync)
            t0 = self.time.monotonic_ns()
            with record_function(name):
                pass
            t1 = self.time.monotonic_ns()
            self.sync.append({'name': name, 'mono_begin_ns': t0, 'mono_end_ns': t1})

    def stop(self):
        if self.stopped:
            return
        self.stopped = True
        import json
        self.mark(5)
        self.prof.__exit__(None, None, None)
        os.makedirs(self.out_dir, exist_ok=True)
        base = os.path.join(self.out_dir, 'torch-%d' % self.pid)
        if self.kineto and self.npu is None:
            self.prof.export_chrome_trace(base + '.json.tmp')
            kind = 'kineto'
        else:
            self.write_events(base + '.json.tmp')
            kind = 'legacy_events'
        os.replace(base + '.json.tmp', base + '.json')
        meta = {'pid': self.pid, 'main_tid': self.main_tid, 'sync': self.sync, 'format': kind,
                'torch': self.torch.__version__, 'activities': self.activities,
                'torch_npu': self.npu is not None}
        with open(base + '.sync.tmp', 'w') as f:
            json.dump(meta, f)
        os.replace(base + '.sync.tmp', base + '.sync')

    def write_events(self, path):
        # Without Kineto (Debian's torch 1.13 is built with USE_KINETO=0) the
        # legacy profiler's own chrome export loses shapes and thread ids, so
        # the events are written here: ts/dur in the profiler's microseconds,
        # the thread that made the sync marks named as this main thread.
        import json
        events = self.prof.events()
        sync_threads = {e.thread for e in events if e.name.startswith('aiprof::clock_sync#')}
        out = []
        for e in events:
            tid = self.main_tid if e.thread in sync_threads else -int(e.thread)
            ev = {'name': e.name, 'ph': 'X', 'cat': 'cpu_op', 'pid': self.pid, 'tid': tid,
                  'ts': e.time_range.start, 'dur': e.time_range.end - e.time_range.start, 'args': {}}
            if e.input_shapes:
                ev['args']['Input Dims'] = e.input_shapes
            if getattr(e, 'sequence_nr', -1) >= 0:
                ev['args']['Sequence number'] = e.sequence_nr
            out.append(ev)
        with open(path, 'w') as f:
            json.dump({'traceEvents': out, 'displayTimeUnit': 'ns'}, f)


class _AiprofTorchFinder:
    """Starts the profiler right after the program's own `import torch` finishes."""

    def find_spec(self, name, path=None, target=None):
        if name != 'torch':
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec('torch')
        if spec is None or spec.loader is None or not hasattr(spec.loader, 'exec_module'):
            return spec
        original = spec.loader.exec_module

        def exec_module(module):
            original(module)
            _aiprof_start(module)

        spec.loader.exec_module = exec_module
        return spec


def _aiprof_start(torch):
    import atexit
    try:
        profiler = _AiprofTorchProfiler(torch)
    except Exception as e:  # the program runs on without the framework layer
        sys.stderr.write('aiprof: torch.profiler not started: %s\n' % e)
        return
    # A program that starts its own torch.profiler takes over: ours stops first.
    import torch.profiler as tp
    own_start = tp.profile.start

    def start(self, *a, **k):
        if self is not profiler.prof:
            profiler.stop()
        return own_start(self, *a, **k)

    tp.profile.start = start
    atexit.register(profiler.stop)


if os.environ.get('AIPROF_CAPTURE_DIR'):
    sys.meta_path.insert(0, _AiprofTorchFinder())
try:
    _aiprof_chain_original()
except Exception:
    pass
