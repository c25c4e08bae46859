"""The Python frames of every thread, sampled by a thread of the program's own.

perf's samples of a Python program show the interpreter's C frames
(_PyEval_EvalFrameDefault), not the program's functions; Debian's Python 3.11
has no perf trampolines. So a daemon thread reads sys._current_frames() `hz`
times a second and writes, to `path`, each distinct stack once as a chain of
nodes ("F id parent line function<TAB>file") and each sample as
"S monotonic_ns native_tid node". aiprof puts the Python stack nearest in time
on each perf sample of the same thread, in place of its interpreter frames
(src/capture/host_trace.cc; docs/capture.md). The thread needs the GIL to
read the frames, so a stack is taken when the running thread lets the GIL go
(at most every switch interval, 5 ms): it names the Python function the
thread is in, not the instant. Lines go to the file every `flush_seconds`
(whole lines only) and at stop(): a process that leaves without stop()
(os._exit, a signal) loses the samples of its last flush_seconds at most.

The sampler never raises into the program: an error while sampling is
caught, counted and the next round goes on; the file then says so
("E count first_error", rewritten as the count grows, the last one holds).
After MAX_CONSECUTIVE_ERRORS rounds in a row fail, or if anything else ends
its thread before stop(), it writes "X monotonic_ns reason" and stops; the
capture reports both as diagnostics (python_sampler_errors,
python_sampler_stopped). "T native_tid" names the sampler's own thread,
whose perf samples are aiprof's work, not the program's.

One source for both users: the aiprof package imports it (aiprof monitor's
deep trace, python/aiprof/_framework.py), and `aiprof trace` writes this file
as aiprof_pysampler.py beside its start-up hook (src/capture/torch_hook.py),
which imports it from there. Standard library only.
"""
import os
import sys
import threading
import time

# Distinct stack nodes kept; past it, samples are not written (a process whose
# stacks never repeat must not grow without bound), and the count is said on
# stderr at stop.
MAX_NODES = 200000

# Sampling rounds that may fail in a row before the sampler gives up (at
# 200 Hz, a quarter of a second of nothing but errors): a fault that does
# not go away must not cost the program a thread spinning on it.
MAX_CONSECUTIVE_ERRORS = 50


class PythonSampler:
    def __init__(self, path, hz, max_nodes=MAX_NODES, flush_seconds=1.0, start=True):
        # start=False: no thread; sample_once() and flush() by hand.  Visible for testing.
        self.period = 1.0 / hz
        self.flush_seconds = flush_seconds
        self.pid = os.getpid()
        self.max_nodes = max_nodes
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # A raw descriptor, not a buffered file: a fork()ed child inherits this
        # object mid-write at worst, and must neither write its lines again nor
        # wait on a buffer's lock held by a thread that is gone (forget()).
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
        self.nodes = {}
        self.lines = []
        self.dropped = 0
        self.errors = 0           # sampling rounds that raised
        self.errors_written = 0   # the count the last "E" line gave
        self.first_error = ''
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        # The native id of the thread that starts the sampler, read here: in a
        # child made by a bare os.fork() threading still holds the parent's
        # for it (only multiprocessing resets it).
        self.own_native = (threading.get_ident(), threading.get_native_id())
        self.thread = threading.Thread(target=self.run, name='aiprof-pysampler', daemon=True)
        if start:
            self.thread.start()

    def node(self, frame):
        # Interned root-first: (parent, file, function, line) -> id; 0 when full.
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
                if len(self.nodes) >= self.max_nodes:
                    return 0
                nid = len(self.nodes) + 1
                self.nodes[key] = nid
                self.lines.append('F %d %d %d %s\t%s\n' % (nid, parent, f.f_lineno or 0,
                                                          code.co_name.replace('\t', ' ').replace('\n', ' '),
                                                          code.co_filename.replace('\t', ' ').replace('\n', ' ')))
            parent = nid
        return parent

    def run(self):
        # Nothing escapes this thread into the program (threading would print
        # the traceback on the program's stderr): a round that fails is
        # counted; a thread that ends before stop() leaves an "X" line.
        reason = None
        try:
            reason = self.loop()
        except BaseException as e:  # noqa: B902 -- never the program's problem
            reason = 'the sampler failed: %s' % self.describe(e)
        if reason is not None:
            try:
                with self.lock:
                    self.lines.append('X %d %s\n' % (time.monotonic_ns(), self.clean(reason)))
                    self.flush()
            except BaseException:  # noqa: B902
                pass

    def loop(self):
        # Returns why sampling stopped before stop() was called, or None.
        with self.lock:
            self.lines.append('T %d\n' % threading.get_native_id())
        try:  # the OS thread's name, so that the monitor leaves this thread's samples out of a request's
            import ctypes
            ctypes.CDLL(None).prctl(15, b'aiprof-pysample', 0, 0, 0)  # PR_SET_NAME
        except Exception:
            pass
        next_flush = time.monotonic() + self.flush_seconds
        failed_in_a_row = 0
        while not self.stopped.is_set() and os.getpid() == self.pid:
            with self.lock:
                try:
                    self.sample_once()
                    if time.monotonic() >= next_flush:
                        next_flush = time.monotonic() + self.flush_seconds
                        self.flush()
                    failed_in_a_row = 0
                except Exception as e:
                    self.errors += 1
                    if not self.first_error:
                        self.first_error = self.describe(e)
                    failed_in_a_row += 1
                    if failed_in_a_row >= MAX_CONSECUTIVE_ERRORS:
                        self.flush_errors()
                        return '%d sampling rounds in a row failed, the last with %s' % (
                            failed_in_a_row, self.describe(e))
            self.stopped.wait(self.period)
        return None

    def sample_once(self):
        # One round: every thread's stack but this one's, at one time. A
        # thread that threading knows no native id of (yet: a thread between
        # its ident and its native id being set, e.g. a DataLoader's queue
        # feeder) is left out this round. Called with self.lock held.
        me = threading.get_ident()
        now_ns = time.monotonic_ns()
        natives = {}
        for t in threading.enumerate():
            if t.ident is not None and isinstance(t.native_id, int):
                natives[t.ident] = t.native_id
        natives[self.own_native[0]] = self.own_native[1]
        for ident, frame in sys._current_frames().items():
            native = natives.get(ident)
            if ident == me or native is None:
                continue
            nid = self.node(frame)
            if nid == 0:
                self.dropped += 1
                continue
            self.lines.append('S %d %d %d\n' % (now_ns, native, nid))

    @staticmethod
    def describe(e):
        return PythonSampler.clean('%s: %s' % (type(e).__name__, e))[:300]

    @staticmethod
    def clean(text):
        return str(text).replace('\r', ' ').replace('\n', ' ')

    def flush_errors(self):
        # The error count so far, once per change: a killed process leaves it too.
        if self.errors != self.errors_written:
            self.lines.append('E %d %s\n' % (self.errors, self.first_error))
            self.errors_written = self.errors

    def flush(self):
        self.flush_errors()
        if self.lines and self.fd >= 0:
            data = ''.join(self.lines).encode('utf-8', 'replace')
            self.lines = []
            while data:
                data = data[os.write(self.fd, data):]

    def forget(self):
        # In a fork()ed child: drop the parent's sampler without writing.
        if os.getpid() != self.pid and self.fd >= 0:
            self.lines = []
            try:
                os.close(self.fd)
            except OSError:
                pass
            self.fd = -1

    def stop(self):
        # A forked child inherits the object, not the thread: only the
        # process that started it writes its file.
        if self.stopped.is_set() or os.getpid() != self.pid:
            return
        self.stopped.set()
        if self.thread.ident is not None:
            self.thread.join(timeout=2.0)
        with self.lock:
            try:
                self.flush()
            except OSError:  # its file cannot be written (a full file system): never the program's problem
                self.lines = []
            if self.dropped:
                sys.stderr.write('aiprof: %d Python samples not written: more than %d distinct stack nodes\n'
                                 % (self.dropped, self.max_nodes))
            os.close(self.fd)
            self.fd = -1
