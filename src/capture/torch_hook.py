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


class _AiprofDirectProfiler:
    """torch.autograd's profiler entry points (what torch.profiler.profile
    calls underneath: _prepare_profiler, _enable_profiler, _disable_profiler),
    CPU ops with shapes; __exit__ keeps the _ProfilerResult, whose events
    _AiprofTorchProfiler.direct_events() reads without torch.profiler's
    FunctionEvent parsing."""

    @staticmethod
    def available():
        try:
            from torch.autograd import profiler as ap
            return all(hasattr(ap, n) for n in ('_prepare_profiler', '_enable_profiler', '_disable_profiler',
                                                 'ProfilerConfig', 'ProfilerState', '_ExperimentalConfig'))
        except Exception:
            return False

    def __init__(self, activities):
        from torch.autograd import profiler as ap
        self.ap = ap
        # (state, record_shapes, profile_memory, with_stack, with_flops,
        # with_modules, experimental): torch.profiler.profile(record_shapes=True)'s.
        self.config = ap.ProfilerConfig(ap.ProfilerState.KINETO, True, False, False, False, False,
                                        ap._ExperimentalConfig())
        self.activities = set(activities)
        self.result = None

    def __enter__(self):
        self.ap._prepare_profiler(self.config, self.activities)
        self.ap._enable_profiler(self.config, self.activities)
        return self

    def __exit__(self, *exc):
        self.result = self.ap._disable_profiler()
        return False


class _AiprofTorchProfiler:
    """torch.profiler in chunks, streamed to one file as the run goes.

    The profiler keeps every op until it stops, so it is stopped and started
    again every AIPROF_TORCH_CHUNK_STEPS steps (default 20) or
    AIPROF_TORCH_CHUNK_SECONDS seconds (default 30), at a step boundary; each
    finished chunk is appended to $AIPROF_CAPTURE_DIR/torch/torch-<pid>.json,
    one event a line, its times moved onto CLOCK_MONOTONIC (microseconds)
    with the chunk's own clock-sync marks. The target's memory then holds at
    most one chunk of ops. Each chunk's export is written as an
    `aiprof::torch_export` event (category aiprof_overhead): aiprof's own
    work, never the program's; so are its clock-sync marks
    (`aiprof::clock_sync#N`, written with category aiprof_overhead). A killed program leaves the file without its
    closing line; aiprof completes it up to the last whole event.

    Step boundaries come from three sources, highest first (STEP_SOURCES,
    docs/capture.md): the end of an optimizer.step; a DataLoader iterator's
    __next__ in this process (its entry ends the previous step, its
    StopIteration ends the last one); the end of an outermost call of an
    nn.Module with parameters (an inference loop). The first boundary of a
    higher source switches to it for the rest of the run: the step the
    lower source had begun is dropped (not written), steps it wrote stay
    (each event says its source in args.aiprof_steps_from) and the lower
    sources stop marking. The span between two boundaries is written as
    ProfilerStep#N; chunks rotate at any boundary of the current source.

    AIPROF_TORCH_EVERY=N (aiprof trace --torch-every N) keeps the op layer to
    1 step in N: the profiler runs from `import torch` to the first step
    boundary (step 0: start-up and the first step), then only
    during ProfilerStep#k for k a multiple of N, each such step a chunk of
    its own; between them it is stopped, and the target pays only for the
    step hook. Step times (every ProfilerStep#N) are written for all steps.
    """

    # Lowest to highest precedence.
    STEP_SOURCES = ('module.forward', 'dataloader.next', 'optimizer.step')

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
        self.chunk_steps = max(1, int(os.environ.get('AIPROF_TORCH_CHUNK_STEPS', '20')))
        self.chunk_ns = int(float(os.environ.get('AIPROF_TORCH_CHUNK_SECONDS', '30')) * 1e9)
        self.every = max(1, int(os.environ.get('AIPROF_TORCH_EVERY', '1') or 1))
        self.profiled_steps = []
        self.dist = None  # {'rank', 'world_size'} from torch.distributed once it is initialized (note_rank)
        from torch.profiler import ProfilerActivity
        activities = [ProfilerActivity.CPU]
        want_cuda = os.environ.get('AIPROF_CAPTURE_CUDA', '1') == '1'
        if want_cuda and torch.cuda.is_available():
            activities.append(ProfilerActivity.CUDA)
        self.activity_enums = activities
        self.activities = [str(a) for a in activities]
        self.kineto = bool(getattr(torch.autograd, 'kineto_available', lambda: False)())
        # Without Kineto, chunks are read straight from torch.autograd's
        # profiler result (_AiprofDirectProfiler), unless the entry points
        # are missing or AIPROF_TORCH_DIRECT=0.
        self.direct = (not self.kineto and os.environ.get('AIPROF_TORCH_DIRECT', '1') == '1' and
                       _AiprofDirectProfiler.available())
        self.npu = None
        try:
            import torch_npu  # noqa: F401
            self.npu = torch_npu
        except Exception:
            pass
        os.makedirs(self.out_dir, exist_ok=True)
        self.base = os.path.join(self.out_dir, 'torch-%d' % self.pid)
        self.stream = open(self.base + '.json', 'w')
        self.stream.write('{"displayTimeUnit":"ns","traceEvents":[{"name":"process_name","ph":"M","pid":%d,'
                          '"args":{"name":"torch"}}\n' % self.pid)
        self.step = 0
        self.step_begin_ns = None
        self.level = -1            # index in STEP_SOURCES of the source marking steps; -1: none yet
        self.steps_by_source = {}  # source -> steps written from it
        self.on_switch = []        # called with the new level when a higher source takes over
        self.term_pending = None   # SIGTERM's end, when the handler could not stop (_aiprof_on_sigterm)
        self.steps_in_chunk = 0
        self.chunks = 0
        self.prof = None
        self.start_chunk()

    def now(self):
        return self.time.monotonic_ns()

    def start_chunk(self):
        if self.npu is not None:
            self.prof = self.npu.profiler.profile(record_shapes=True)
        elif self.direct:
            self.prof = _AiprofDirectProfiler(self.activity_enums)
        else:
            from torch.profiler import profile
            self.prof = profile(activities=self.activity_enums, record_shapes=True)
        self.prof.__enter__()
        self.chunk_begin_ns = self.now()
        self.steps_in_chunk = 0
        self.chunk_marks = []
        self.mark(3)

    def mark(self, count):
        from torch.profiler import record_function
        for _ in range(count):
            name = 'aiprof::clock_sync#%d' % len(self.sync)
            t0 = self.now()
            with record_function(name):
                pass
            t1 = self.now()
            entry = {'name': name, 'mono_begin_ns': t0, 'mono_end_ns': t1}
            self.sync.append(entry)
            self.chunk_marks.append(entry)

    def write_event(self, event):
        import json
        self.stream.write(',' + json.dumps(event, separators=(',', ':')) + '\n')

    def end_chunk(self):
        self.mark(3)
        self.prof.__exit__(None, None, None)
        events = self.chunk_events()
        offset_us = self.chunk_offset_us(events)
        for ev in events:
            if 'ts' in ev:
                ev['ts'] = round(float(ev['ts']) + offset_us, 3)
            if str(ev.get('name', '')).startswith('aiprof::clock_sync#'):
                # aiprof's own marks, not the program's ops (as the export).
                ev['cat'] = 'aiprof_overhead'
            self.write_event(ev)
        del events
        self.prof = None
        self.chunks += 1

    def rotate(self, final, restart=True):
        # Everything between stopping one chunk and starting the next is
        # aiprof's work in the target: one aiprof::torch_export slice.
        t0 = self.now()
        self.end_chunk()
        if not final and restart:
            self.start_chunk()
        self.write_sync(final=False)
        t1 = self.now()
        self.write_event({'name': 'aiprof::torch_export', 'ph': 'X', 'cat': 'aiprof_overhead', 'pid': self.pid,
                          'tid': self.main_tid, 'ts': t0 / 1e3, 'dur': (t1 - t0) / 1e3,
                          'args': {'chunk': self.chunks}})
        self.stream.flush()

    def chunk_offset_us(self, events):
        # Monotonic minus profiler time of each mark's midpoint; the median.
        by_name = {}
        for ev in events:
            name = ev.get('name', '')
            if name.startswith('aiprof::clock_sync#') and ev.get('ph') == 'X':
                by_name[name] = float(ev['ts']) + float(ev.get('dur', 0)) / 2
        d = sorted((m['mono_begin_ns'] + m['mono_end_ns']) / 2e3 - by_name[m['name']]
                   for m in self.chunk_marks if m['name'] in by_name)
        return d[len(d) // 2] if d else 0.0

    def chunk_events(self):
        if self.kineto and self.npu is None:
            import json
            tmp = self.base + '.chunk.tmp'
            self.prof.export_chrome_trace(tmp)
            with open(tmp) as f:
                doc = json.load(f)
            os.remove(tmp)
            events = doc.get('traceEvents', []) if isinstance(doc, dict) else doc
            return [e for e in events if isinstance(e, dict)]
        if self.direct:
            return self.direct_events()
        return self.legacy_events()

    def direct_events(self):
        # The same events as legacy_events() (the same filter, names, relative
        # microseconds, threads, shapes and sequence numbers as torch's
        # _parse_kineto_results gives FunctionEvents), read from the
        # profiler's result without building FunctionEvents, memory
        # attribution or the op tree: a quarter to a third of the export time
        # (docs/capture.md, "Cheaper chunk export").
        result = self.prof.result
        try:
            from torch.autograd.profiler import _filter_name
        except ImportError:
            def _filter_name(name):
                return name in ('[memory]', '[OutOfMemory]')
        start = result.trace_start_us()
        rows = []
        sync_threads = set()
        for e in result.events():
            name = e.name()
            if _filter_name(name):
                continue
            tid = e.start_thread_id()
            if name.startswith('aiprof::clock_sync#'):
                sync_threads.add(tid)
            elif name.startswith('ProfilerStep#'):
                name = 'ProfilerStep*'  # as torch's own parsing names them
            rows.append((name, tid, e.start_us() - start, e.duration_us(), e.shapes(), e.sequence_nr()))
        rows = _aiprof_nest_rounded(rows)
        out = []
        for name, tid, ts, dur, shapes, seq in rows:
            ev = {'name': name, 'ph': 'X', 'cat': 'cpu_op', 'pid': self.pid,
                  'tid': self.main_tid if tid in sync_threads else -int(tid), 'ts': ts, 'dur': dur, 'args': {}}
            if shapes:
                ev['args']['Input Dims'] = shapes
            if seq >= 0:
                ev['args']['Sequence number'] = seq
            out.append(ev)
        return out

    def legacy_events(self):
        # Without Kineto (Debian's torch 1.13 is built with USE_KINETO=0) the
        # legacy profiler's own chrome export loses shapes and thread ids, so
        # the events are written here: ts/dur in the profiler's microseconds,
        # the thread that made the sync marks named as this main thread.
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
        return out

    def write_sync(self, final):
        import json
        meta = {'pid': self.pid, 'main_tid': self.main_tid, 'sync': self.sync,
                'format': 'aiprof_stream', 'clock': 'monotonic_us', 'chunks': self.chunks,
                'steps': self.step, 'steps_from': self.steps_from(), 'steps_by_source': self.steps_by_source,
                'final': final, 'torch_every': self.every, 'profiled_steps': self.profiled_steps,
                'torch': self.torch.__version__, 'activities': self.activities,
                'torch_npu': self.npu is not None}
        self.note_rank()
        if self.dist is not None:
            meta.update(self.dist)
        with open(self.base + '.sync.tmp', 'w') as f:
            json.dump(meta, f)
        os.replace(self.base + '.sync.tmp', self.base + '.sync')

    def note_rank(self):
        # This process's rank in torch.distributed's default group, the first
        # time it is initialized (mp.spawn's workers pass their rank to
        # init_process_group, not through RANK): aiprof puts every track of
        # the process on it (docs/capture.md, "Ranks"). Kept after
        # destroy_process_group.
        if self.dist is not None:
            return
        try:
            d = self.torch.distributed
            if d.is_available() and d.is_initialized():
                self.dist = {'rank': int(d.get_rank()), 'world_size': int(d.get_world_size())}
        except Exception:
            pass

    def steps_from(self):
        # The sources of the written steps, in the order they took over:
        # "optimizer.step", or "module.forward then optimizer.step" when an
        # inference pass wrote steps before training began.
        return ' then '.join(src for src in self.STEP_SOURCES if self.steps_by_source.get(src))

    def fail(self, e):
        # The torch layer cannot go on (its file cannot be written: the
        # capture folder's file system is full, a file size limit): it stops
        # for good and the program runs on without it. Never raised into the
        # program: boundary() runs inside its optimizer.step(), DataLoader
        # next() and model calls. Said once on the program's stderr; aiprof
        # keeps the ops of the chunks written before (torch_stream_unterminated).
        first = not self.stopped
        self.stopped = True
        for f in self.on_switch:  # the module-call wrapper comes off
            try:
                f(len(self.STEP_SOURCES))
            except Exception:
                pass
        if self.prof is not None:
            try:
                self.prof.__exit__(None, None, None)
            except Exception:
                pass
            self.prof = None
        try:
            self.stream.close()
        except Exception:
            pass
        if first:
            try:
                sys.stderr.write('aiprof: the torch layer stopped after step %d (%s: %s); the program goes on '
                                 'without it (capture folder %s)\n'
                                 % (self.step, type(e).__name__, e, os.environ.get('AIPROF_CAPTURE_DIR', '?')))
            except Exception:
                pass

    def boundary(self, source):
        # A step boundary from `source`: the span from the previous boundary
        # is written as ProfilerStep#N, and the chunk may rotate here.
        if self.stopped or os.getpid() != self.pid:
            return
        if self.term_pending:  # SIGTERM came where the profiler could not be stopped
            end, self.term_pending = self.term_pending, False
            try:
                self.stop()
            finally:
                end()
        try:
            self.step_boundary(source)
        except Exception as e:  # never the program's problem
            self.fail(e)

    def step_boundary(self, source):
        if self.dist is None:
            self.note_rank()
        level = self.STEP_SOURCES.index(source)
        if level < self.level:
            return
        now = self.now()
        if level > self.level:
            self.level = level
            self.step_begin_ns = None  # a lower source's step in progress is not written
            for f in self.on_switch:
                f(level)
        if self.step_begin_ns is not None:
            self.step += 1
            self.steps_by_source[source] = self.steps_by_source.get(source, 0) + 1
            self.write_event({'name': 'ProfilerStep#%d' % self.step, 'ph': 'X', 'cat': 'user_annotation',
                              'pid': self.pid, 'tid': self.main_tid, 'ts': self.step_begin_ns / 1e3,
                              'dur': (now - self.step_begin_ns) / 1e3, 'args': {'aiprof_steps_from': source}})
        self.steps_in_chunk += 1
        # The step that begins now is ProfilerStep#(self.step + 1).
        upcoming = self.step + 1
        if self.every > 1:
            want = upcoming % self.every == 0
            if self.prof is not None and not want:
                self.rotate(final=False, restart=False)  # the op layer rests until step k*N
            elif self.prof is None and want:
                self.start_chunk()
            elif self.prof is not None and (self.steps_in_chunk >= self.chunk_steps or
                                            now - self.chunk_begin_ns >= self.chunk_ns):
                self.rotate(final=False)
            if want and (not self.profiled_steps or self.profiled_steps[-1] != upcoming):
                self.profiled_steps.append(upcoming)
        elif self.steps_in_chunk >= self.chunk_steps or now - self.chunk_begin_ns >= self.chunk_ns:
            self.rotate(final=False)
        self.step_begin_ns = self.now()

    def end_steps(self, source):
        # The source's last step ended at its last boundary (a DataLoader
        # iterator exhausted): no step is in progress until the next one.
        if self.level == self.STEP_SOURCES.index(source) and os.getpid() == self.pid:
            self.step_begin_ns = None

    def stop(self):
        # Only the process that started the profiler writes (a fork()ed
        # DataLoader worker inherits this object and its atexit).
        if self.stopped or os.getpid() != self.pid:
            return
        self.stopped = True
        for f in self.on_switch:  # the module-call wrapper comes off
            f(len(self.STEP_SOURCES))
        try:
            if self.prof is not None:
                self.rotate(final=True)
            self.stream.write(']}\n')
            self.stream.close()
            self.write_sync(final=True)
        except OSError as e:  # the file cannot be written (a full file system): as in boundary()
            self.stopped = False
            self.fail(e)


def _aiprof_nest_rounded(rows):
    # torch 1.13's events give start_us() and duration_us() each truncated
    # from nanoseconds, so an op can end 1 us after the op that encloses it
    # (a trial's 4-minute capture: 2,399 slice_partial_overlap diagnostics,
    # 'detach_' ending 1 us after 'aten::detach_', and not counted as its
    # child). Per thread, an op that begins inside another and overruns it
    # by at most that 1 us ends with it. rows: (name, tid, ts, dur, ...).
    order = sorted(range(len(rows)), key=lambda i: (rows[i][1], rows[i][2], -rows[i][3]))
    out = list(rows)
    stack = []  # ends of the open ops of the current thread
    tid = None
    for i in order:
        row = out[i]
        if row[1] != tid:
            tid, stack = row[1], []
        ts, end = row[2], row[2] + row[3]
        while stack and stack[-1] <= ts:
            stack.pop()
        if stack and 0 < end - stack[-1] <= 1:
            end = stack[-1]
            out[i] = row[:3] + (end - ts,) + row[4:]
        stack.append(end)
    return out


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
            _aiprof_hook_dataloader_workers(module)
            if os.environ.get('AIPROF_CAPTURE_TORCH', '1') == '1':
                _aiprof_start(module)

        spec.loader.exec_module = exec_module
        return spec


def _aiprof_hook_optimizer(torch, profiler):
    # Every optimizer's step ends a training step (docs/capture.md).
    optimizer = torch.optim.Optimizer
    own_init = optimizer.__init__

    def init(self, *a, **k):
        own_init(self, *a, **k)
        cls = type(self)
        if cls.__dict__.get('_aiprof_step_hooked'):
            return
        step = cls.step

        def hooked_step(opt, *sa, **sk):
            result = step(opt, *sa, **sk)
            profiler.boundary('optimizer.step')
            return result

        hooked_step.__wrapped__ = step
        cls.step = hooked_step
        cls._aiprof_step_hooked = True

    optimizer.__init__ = init


def _aiprof_hook_dataloader_steps(torch, profiler):
    # Each __next__ of a DataLoader iterator on the thread that imported
    # torch ends the previous step (its entry: a step is fetching its batch
    # and using it); the call that raises StopIteration ends the last one.
    # A fork()ed worker inherits the patch; boundary() ignores other pids.
    import threading
    from torch.utils.data.dataloader import _BaseDataLoaderIter
    own = _BaseDataLoaderIter.__next__
    main = threading.get_ident()
    ident = threading.get_ident

    def __next__(self):
        if ident() != main:
            return own(self)
        profiler.boundary('dataloader.next')
        try:
            return own(self)
        except StopIteration:
            profiler.end_steps('dataloader.next')
            raise

    __next__.__wrapped__ = own
    _BaseDataLoaderIter.__next__ = __next__


def _aiprof_hook_module_steps(torch, profiler):
    # The end of an outermost nn.Module call (no other module call on the
    # stack) of a module with parameters, on the thread that imported torch,
    # ends a step: an inference loop's model(x). Wrapping Module.__call__
    # costs about 0.4 us per module call (docs/capture.md); the wrapper is
    # taken off as soon as a higher source (DataLoader, optimizer) marks a
    # step, so a training loop pays it during its first iteration only.
    import threading
    module = torch.nn.Module
    own = module.__dict__['__call__']
    main = threading.get_ident()
    ident = threading.get_ident
    depth = [0]

    def call(self, *a, **k):
        if ident() != main:
            return own(self, *a, **k)
        depth[0] += 1
        try:
            result = own(self, *a, **k)
        finally:
            depth[0] -= 1
        if depth[0] == 0 and next(iter(self.parameters()), None) is not None:
            profiler.boundary('module.forward')
        return result

    call.__wrapped__ = own
    module.__call__ = call
    level = profiler.STEP_SOURCES.index('module.forward')

    def off(new_level):
        if new_level > level and module.__dict__.get('__call__') is call:
            module.__call__ = own

    profiler.on_switch.append(off)


def _aiprof_on_sigterm(profiler):
    # aiprof stops a command with SIGINT, then SIGTERM (docs/capture.md): on
    # SIGTERM the profiler writes what it holds, then the signal ends the
    # program as it would have. A program's own SIGTERM handler is kept.
    import signal
    try:
        if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
            return

        def end():
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

        busy = []

        def handler(signum, frame):
            # A second SIGTERM while the first is handled (a scheduler that
            # signals every process of the job, SLURM's way, and aiprof
            # passing its own on) re-entered here and ended the program in
            # the middle of writing its last chunk: it is left to the first.
            if busy:
                return
            busy.append(signum)
            # Other signals' Python handlers wait until the chunk is written:
            # with the whole job signalled, the DataLoader's workers die too
            # and torch's SIGCHLD handler raised "DataLoader worker ... is
            # killed by signal" in the middle of the export. They run after it.
            held, saved = [], {}
            for other in (getattr(signal, 'SIGCHLD', None), signal.SIGINT):
                try:
                    if other is not None and callable(signal.getsignal(other)):
                        saved[other] = signal.signal(other, lambda s, f: held.append(s))
                except (ValueError, OSError, TypeError):
                    pass

            def release(deliver):
                for other, old in saved.items():
                    signal.signal(other, old)
                for other in held if deliver else ():
                    saved[other](other, None)

            try:
                profiler.stop()
            except RuntimeError:
                # torch's profiler state is thread-local and was not found
                # where the handler interrupted the program ("Can't disable
                # Kineto profiler when it's not running", seen after a
                # KeyboardInterrupt the program caught): stop at the next step
                # boundary instead, then end by SIGTERM (aiprof's SIGKILL
                # comes 10 s later if none comes).
                if profiler.term_pending is None:
                    profiler.stopped = False
                    profiler.term_pending = end
                    busy.clear()
                    release(deliver=True)  # the program goes on: what came meanwhile reaches it
                    return
            except BaseException:
                release(deliver=False)
                end()
                raise
            release(deliver=False)  # the program ends now
            end()

        signal.signal(signal.SIGTERM, handler)
    except ValueError:  # torch imported outside the main thread
        pass


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
    try:
        _aiprof_hook_optimizer(torch, profiler)
    except Exception as e:
        sys.stderr.write('aiprof: optimizer steps not hooked: %s\n' % e)
    try:
        _aiprof_hook_dataloader_steps(torch, profiler)
    except Exception as e:
        sys.stderr.write('aiprof: DataLoader steps not hooked: %s\n' % e)
    if os.environ.get('AIPROF_TORCH_MODULE_STEPS', '1') == '1':
        try:
            _aiprof_hook_module_steps(torch, profiler)
        except Exception as e:
            sys.stderr.write('aiprof: module-call steps not hooked: %s\n' % e)
    _aiprof_on_sigterm(profiler)
    atexit.register(profiler.stop)


_aiprof_py_sampler = None


def _aiprof_start_python_sampler():
    # One sampler per process: started here in every Python process of the
    # command (spawned ones run this file too), and again in a fork()ed
    # child (a DataLoader worker, a fork Pool's worker, a bare os.fork()),
    # where the parent's thread did not survive: the child's sampler writes
    # its own py-<pid>.txt. Its file is written on the way out by atexit, by
    # multiprocessing's exit path (which skips atexit: see
    # _aiprof_hook_process_roles), and every AIPROF_PY_FLUSH_SECONDS (0.2 s)
    # as it runs, so a child leaving by os._exit loses at most that much.
    global _aiprof_py_sampler
    hz = float(os.environ.get('AIPROF_PY_SAMPLE_HZ', '0') or 0)
    if hz <= 0:
        return
    import atexit
    try:
        # aiprof writes python/aiprof/_pysampler.py beside this file as
        # aiprof_pysampler.py: one sampler for aiprof trace and aiprof monitor.
        from aiprof_pysampler import PythonSampler
        out = os.path.join(os.environ['AIPROF_CAPTURE_DIR'], 'python', 'py-%d.txt' % os.getpid())
        flush_s = float(os.environ.get('AIPROF_PY_FLUSH_SECONDS', '0.2') or 0.2)
        sampler = PythonSampler(out, min(hz, 1000.0), flush_seconds=flush_s)
    except Exception as e:  # the program runs on without Python frames
        sys.stderr.write('aiprof: Python frames not sampled: %s\n' % e)
        return
    first = _aiprof_py_sampler is None
    if not first:
        _aiprof_py_sampler.forget()  # the parent's, inherited by this child
    _aiprof_py_sampler = sampler
    atexit.register(sampler.stop)
    if first and hasattr(os, 'register_at_fork'):
        os.register_at_fork(after_in_child=_aiprof_start_python_sampler)


def _aiprof_stop_python_sampler():
    sampler = _aiprof_py_sampler
    if sampler is not None:
        try:
            sampler.stop()
        except Exception:
            pass


# Each process's role and command line, for aiprof to name its tracks
# (src/capture/process_names.cc): $AIPROF_CAPTURE_DIR/procs/<pid>.txt holds
# "role<newline>command line"; the latest writer wins, so a DataLoader worker
# (a multiprocessing process, itself a fork) ends as "DataLoader worker N".
# Written when the process starts (the command), in a child right after fork
# ("fork of PPID"), when multiprocessing starts a Process in it ("Pool worker
# N" for a Pool's workers, else the Process's name; fork, spawn and
# forkserver alike) and when torch's DataLoader makes it a worker. A small
# file per process, written once per role: nothing per step.
def _aiprof_write_role(role):
    try:
        folder = os.path.join(os.environ['AIPROF_CAPTURE_DIR'], 'procs')
        os.makedirs(folder, exist_ok=True)
        argv = [os.path.basename(sys.executable or 'python')] + [
            os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv)]
        text = '%s\n%s\n' % (role.replace('\n', ' '), ' '.join(argv).replace('\n', ' '))
        # A third line, where the environment names a torch.distributed rank
        # (torchrun, torch.distributed.launch and most launchers set RANK and
        # WORLD_SIZE; a DataLoader worker inherits its rank's): "rank R world_size W".
        rank = os.environ.get('RANK', '').strip()
        if rank.isdigit():
            world = os.environ.get('WORLD_SIZE', '').strip()
            text += 'rank %s world_size %s\n' % (rank, world if world.isdigit() else '0')
        path = os.path.join(folder, '%d.txt' % os.getpid())
        with open(path + '.tmp', 'w') as f:
            f.write(text)
        os.replace(path + '.tmp', path)
    except Exception:  # never the program's problem
        pass


def _aiprof_pool_role(name):
    # multiprocessing names a Pool's workers ForkPoolWorker-N, SpawnPoolWorker-N, ForkServerPoolWorker-N.
    import re
    m = re.match(r'^(?:Fork|Spawn|ForkServer)?PoolWorker-(\d+)$', name or '')
    return 'Pool worker %s' % m.group(1) if m else 'multiprocessing %s' % name


def _aiprof_hook_process_roles():
    _aiprof_write_role('')
    if hasattr(os, 'register_at_fork'):
        os.register_at_fork(after_in_child=lambda: _aiprof_write_role('fork of %d' % os.getppid()))
    try:
        import multiprocessing.process as mp
    except Exception:
        return
    own = mp.BaseProcess._bootstrap

    def bootstrap(self, *a, **k):
        # A fork()ed multiprocessing child (a DataLoader or Pool worker)
        # leaves by os._exit right after this returns, without atexit: its
        # Python sampler writes its file here.
        _aiprof_write_role(_aiprof_pool_role(self.name))
        try:
            return own(self, *a, **k)
        finally:
            _aiprof_stop_python_sampler()

    bootstrap.__wrapped__ = own
    mp.BaseProcess._bootstrap = bootstrap


def _aiprof_hook_dataloader_workers(torch):
    try:
        from torch.utils.data._utils import worker
        cls = worker.WorkerInfo
        own = cls.__init__
    except Exception:
        return

    def init(self, *a, **k):
        own(self, *a, **k)
        wid = k.get('id', getattr(self, 'id', None))
        if wid is not None:
            _aiprof_write_role('DataLoader worker %s' % wid)

    init.__wrapped__ = own
    cls.__init__ = init


if os.environ.get('AIPROF_CAPTURE_DIR'):
    _aiprof_hook_process_roles()
    _aiprof_start_python_sampler()
    sys.meta_path.insert(0, _AiprofTorchFinder())
try:
    _aiprof_chain_original()
except Exception:
    pass
