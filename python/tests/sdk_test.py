"""The SDK half of the aiprof package: a threaded Python program records with the
C runtime, and the file it writes is read back by aiprof.load and the CLI.

Each scenario runs in a child interpreter (the runtime reads its environment
once, at load, and writes at exit), with AIPROF_OUTPUT in a temporary folder.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import aiprof

AIPROF = os.environ["AIPROF_BIN"]

THREADS = 8
SPANS = 20000  # per thread, each with one nested span: 2 * 8 * 20000 slices

THREADED = textwrap.dedent("""
    import sys, threading, time
    import aiprof

    THREADS, SPANS = int(sys.argv[1]), int(sys.argv[2])

    @aiprof.span("decorated")
    def work(i):
        return i + 1

    def worker(k):
        inner = aiprof.span("inner")  # one object reused: the name is interned once
        for i in range(SPANS):
            with aiprof.span("outer"):
                with inner:
                    pass
        for i in range(10):
            work(i)
        with aiprof.node("tokenize"):
            pass
        aiprof.counter("queue_depth", k)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(THREADS)]
    for t in threads: t.start()
    for t in threads: t.join()

    # Steps on the main thread, with a busy-wait of known length inside a nested span.
    for n in range(3):
        with aiprof.step():
            with aiprof.span("busy_2ms"):
                end = time.perf_counter() + 0.002
                while time.perf_counter() < end:
                    pass

    # A request begun here (inside "receive") and ended on another thread
    # (inside "reply") after a 5 ms busy-wait: a flow links the two spans.
    t0 = aiprof.clock_ns()
    with aiprof.span("receive"):
        r = aiprof.request("request")
    def finish():
        end = time.perf_counter() + 0.005
        while time.perf_counter() < end:
            pass
        with aiprof.span("reply"):
            r.end()
            r.end()  # a second end is ignored
    t = threading.Thread(target=finish); t.start(); t.join()
    t1 = aiprof.clock_ns()
    with aiprof.request("request"):
        pass
    print(t0, t1)
""")


def worker_samples(path, tid):
    """Stack lines of thread `tid` the Python sampler has flushed to `path`."""
    try:
        with open(path) as f:
            return sum(1 for line in f if line.startswith('S ') and line.split()[2] == str(tid))
    except FileNotFoundError:
        return 0


def run_child(script, env_extra, *args):
    env = dict(os.environ)
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", script, *map(str, args)], env=env, check=True,
                          capture_output=True, text=True)


class ThreadedScript(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = os.path.join(cls.tmp.name, "py.aiprof")
        proc = run_child(THREADED, {"AIPROF_OUTPUT": cls.out}, THREADS, SPANS)
        cls.t0, cls.t1 = map(int, proc.stdout.split())
        cls.trace = aiprof.load(cls.out)
        cls.slices = cls.trace.slices()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def count(self, name):
        return int((self.slices.name == name).sum())

    def test_nothing_lost(self):
        self.assertEqual(self.count("outer"), THREADS * SPANS)
        self.assertEqual(self.count("inner"), THREADS * SPANS)
        self.assertEqual(self.count("decorated"), THREADS * 10)
        self.assertEqual(self.count("node:tokenize"), THREADS)

    def test_cli_counts_agree(self):
        out = subprocess.run([AIPROF, "summary", self.out, "--format", "json", "--top", "0"], check=True,
                             capture_output=True, text=True).stdout
        counts = {o["name"]: o["count"] for o in json.loads(out)["ops"]}
        self.assertEqual(counts["outer"], THREADS * SPANS)
        self.assertEqual(counts["inner"], THREADS * SPANS)

    def test_nesting_per_thread(self):
        s = self.slices
        inner, outer = s[s.name == "inner"], s[s.name == "outer"]
        self.assertTrue((inner.depth == outer.depth.iloc[0] + 1).all())
        self.assertEqual(inner.track.nunique(), THREADS)
        self.assertEqual(set(inner.track), set(outer.track))

    def test_busy_wait_durations(self):
        busy = self.slices[self.slices.name == "busy_2ms"]
        self.assertEqual(len(busy), 3)
        self.assertTrue((busy.dur_ns >= 2_000_000).all(), busy.dur_ns.tolist())
        self.assertTrue((busy.dur_ns < 200_000_000).all(), busy.dur_ns.tolist())  # loose: shared machine

    def test_steps(self):
        steps = self.trace.steps()
        self.assertEqual(len(steps), 3)
        self.assertEqual(steps.number.tolist(), [0, 1, 2])
        busy = self.slices[self.slices.name == "busy_2ms"].sort_values("ts_ns")
        for step, b in zip(steps.itertuples(), busy.itertuples()):
            self.assertLessEqual(step.ts_ns, b.ts_ns)
            self.assertGreaterEqual(step.ts_ns + step.dur_ns, b.ts_ns + b.dur_ns)

    def test_request_across_threads(self):
        req = self.slices[self.slices.name == "request"].sort_values("ts_ns")
        self.assertEqual(len(req), 2)
        first = req.iloc[0]
        self.assertGreaterEqual(first.dur_ns, 5_000_000)
        # Same clock as aiprof.clock_ns(): the request lies between the two readings.
        self.assertGreaterEqual(first.ts_ns, self.t0 - 1_000_000)
        self.assertLessEqual(first.ts_ns + first.dur_ns, self.t1)
        flows = self.trace.flows()
        self.assertEqual(len(flows), 1)
        names = self.slices.name.astype(str).values
        self.assertEqual((names[flows.from_slice.iloc[0]], names[flows.to_slice.iloc[0]]), ("receive", "reply"))

    def test_counters(self):
        c = self.trace.counters()
        q = c[c.name == "queue_depth"]
        self.assertEqual(sorted(q.value.tolist()), [float(k) for k in range(THREADS)])

    def test_validate_reads_requests(self):
        # The SDK's file feeds validate with requests as samples.
        r = aiprof.validate(self.trace, self.out, metrics=["latency"], unit="request")
        self.assertEqual(r["metrics"][0]["metric"], "latency")
        self.assertEqual(r["metrics"][0]["n_before"], 2)


class Disabled(unittest.TestCase):
    def test_enable_0_writes_nothing(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "off.aiprof")
            script = textwrap.dedent("""
                import aiprof
                assert not aiprof.enabled()
                with aiprof.span("x"):
                    pass
                with aiprof.step():
                    pass
                r = aiprof.request("r"); r.end()
                aiprof.counter("c", 1.0)
                aiprof.flush()
            """)
            run_child(script, {"AIPROF_OUTPUT": out, "AIPROF_ENABLE": "0"})
            self.assertEqual(os.listdir(d), [])


class MonitorPythonFrames(unittest.TestCase):
    """The sampler aiprof monitor's deep trace starts through the framework
    handler (python/aiprof/_framework.py): the file is in the format the
    capture splices (src/capture/host_trace.cc, ReadPythonSamples)."""

    def test_samples_name_the_busy_function_on_its_thread(self):
        import errno
        import threading
        import time
        from aiprof import _framework
        if 'torch' in sys.modules:
            self.skipTest('torch imported: the handler would start torch.profiler too')

        def busy_python_function(stop):
            n = 0
            while not stop.is_set():
                n += 1
            return n

        with tempfile.TemporaryDirectory() as d:
            stop = threading.Event()
            worker = threading.Thread(target=busy_python_function, args=(stop,))
            worker.start()
            try:
                self.assertEqual(_framework.handle(True, d), 0)
                time.sleep(0.3)
                # Then until the worker has 6 samples flushed (once a second):
                # a starved sampler thread takes fewer rounds than its rate says.
                path, deadline = os.path.join(d, 'python', 'py-%d.txt' % os.getpid()), time.monotonic() + 20
                while time.monotonic() < deadline and worker_samples(path, worker.native_id) < 6:
                    time.sleep(0.05)
                self.assertEqual(_framework.handle(False, d), 0)
            finally:
                stop.set()
                worker.join()
            nodes, samples = {0: None}, []
            with open(os.path.join(d, 'python', 'py-%d.txt' % os.getpid())) as f:
                for line in f:
                    if line.startswith('F '):
                        head, file = line.rstrip('\n').split('\t')
                        _, nid, parent, lineno, name = head.split(' ', 4)
                        self.assertEqual(int(nid), len(nodes), line)  # ids in order, parents before children
                        self.assertIn(int(parent), nodes, line)
                        nodes[int(nid)] = (int(parent), name, file)
                    elif line.startswith('T '):
                        pass  # the sampler's own thread (aiprof overhead in a capture)
                    else:
                        self.assertFalse(line.startswith(('E ', 'X ')), 'the sampler failed: ' + line)
                        tag, ts, tid, nid = line.split()
                        self.assertEqual(tag, 'S', line)
                        self.assertIn(int(nid), nodes, line)
                        samples.append((int(tid), int(nid)))
            on_worker = [n for tid, n in samples if tid == worker.native_id]
            self.assertGreater(len(on_worker), 5)
            def chain(n):
                while n:
                    yield nodes[n][1]
                    n = nodes[n][0]
            busy = [n for n in on_worker if 'busy_python_function' in chain(n)]
            self.assertGreater(len(busy), len(on_worker) // 2, [nodes[n] for n in on_worker[:5]])
            self.assertFalse(any(name == 'run' and file.endswith('_framework.py')
                                 for _, name, file in filter(None, nodes.values())),
                             'the sampler does not sample itself')
            # Off: AIPROF_PY_SAMPLE_HZ=0 starts nothing (and torch is not imported).
            os.environ['AIPROF_PY_SAMPLE_HZ'] = '0'
            try:
                self.assertEqual(_framework.handle(True, d + '/off'), errno.ENOTSUP)
            finally:
                del os.environ['AIPROF_PY_SAMPLE_HZ']
            self.assertFalse(os.path.exists(d + '/off'))


class Api(unittest.TestCase):
    def test_decorator_keeps_metadata_and_exceptions_close_spans(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "api.aiprof")
            script = textwrap.dedent("""
                import aiprof
                @aiprof.span
                def named_by_qualname():
                    "doc"
                    return 7
                assert named_by_qualname() == 7 and named_by_qualname.__doc__ == "doc"
                try:
                    with aiprof.span("raises"):
                        raise KeyError("x")
                except KeyError:
                    pass
                with aiprof.span("after"):
                    pass
                try:
                    aiprof.span("bad\\0name")
                except ValueError:
                    print("nul rejected")
                try:
                    aiprof.counter(3, 1.0)
                except TypeError:
                    print("non-str rejected")
                aiprof.flush()
            """)
            proc = run_child(script, {"AIPROF_OUTPUT": out})
            self.assertIn("nul rejected", proc.stdout)
            self.assertIn("non-str rejected", proc.stdout)
            s = aiprof.load(out).slices()
            self.assertEqual(sorted(set(s.name)), ["after", "named_by_qualname", "raises"])
            # "after" is not nested in "raises": the exception closed it.
            self.assertEqual(s[s.name == "after"].depth.iloc[0], s[s.name == "raises"].depth.iloc[0])


class TokensAndForkedExit(unittest.TestCase):
    def test_tokens_and_a_worker_leaving_by_os_exit(self):
        # A request's tokens (prefill, token, tokens) are matched to it; a
        # fork()ed worker that leaves through os._exit keeps its spans in its
        # spill file (docs/sdk.md, "Surviving any exit").
        with tempfile.TemporaryDirectory() as d:
            script = textwrap.dedent("""
                import os
                import aiprof
                r = aiprof.request("generate")
                r.prefill(7)
                r.token()
                r.tokens(3)
                for bad, exc in (("x", TypeError), (2 ** 40, OverflowError)):
                    try:
                        r.tokens(bad)
                    except exc:
                        print("rejected", exc.__name__)
                r.end()
                pid = os.fork()
                if pid == 0:
                    for i in range(100):
                        with aiprof.span("child"):
                            pass
                    os._exit(0)
                os.waitpid(pid, 0)
                print("child", pid)
            """)
            proc = run_child(script, {"AIPROF_OUTPUT": d + "/"})
            self.assertIn("rejected TypeError", proc.stdout)
            self.assertIn("rejected OverflowError", proc.stdout)
            child = [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("child")][0]
            spill = os.path.join(d, "aiprof-%s.aiprof.part" % child)
            self.assertTrue(os.path.exists(spill), os.listdir(d))
            t = aiprof.load(spill)
            self.assertEqual(int((t.slices().name == "child").sum()), 100)
            self.assertEqual(t.metadata.get("sdk.source"), "spill")
            finals = [f for f in os.listdir(d) if f.endswith(".aiprof")]
            self.assertEqual(len(finals), 1, finals)
            parent = aiprof.load(os.path.join(d, finals[0]))
            self.assertEqual(int((parent.slices().name == "generate").sum()), 1)
            self.assertEqual(parent.metadata.get("sdk.token_events_unmatched"), "0")
            # The two files of the run, named one by one, load as one trace,
            # as on the CLI (`aiprof summary traces/aiprof-*`) and as the folder.
            both = aiprof.load([os.path.join(d, finals[0]), spill])
            self.assertEqual(int((both.slices().name == "child").sum()), 100)
            self.assertEqual(int((both.slices().name == "generate").sum()), 1)
            self.assertEqual(both.path, os.path.join(d, finals[0]) + " " + spill)
            self.assertEqual(len(both.slices()), len(aiprof.load(d).slices()))
            with self.assertRaisesRegex(aiprof.Error, "missing.json: cannot open"):
                aiprof.load([spill, os.path.join(d, "missing.json")])
            with self.assertRaisesRegex(ValueError, "no path"):
                aiprof.load([])


class NamesAndArguments(unittest.TestCase):
    def test_undecodable_names_are_recorded_not_raised(self):
        # os.fsdecode of a non-UTF-8 file name holds lone surrogates; they raised
        # UnicodeEncodeError from inside the caller's loop. Now written escaped.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "names.aiprof")
            script = textwrap.dedent("""
                import os, aiprof
                name = os.fsdecode(b"batch_\\xff.bin")
                assert "\\udcff" in name
                with aiprof.span(name):
                    with aiprof.node(name):
                        aiprof.mark(name)
                aiprof.counter(name, 2.0)
                aiprof.thread_name(name)
                with aiprof.request(name):
                    pass
                aiprof.flush()
                print("ok")
            """)
            proc = run_child(script, {"AIPROF_OUTPUT": out})
            self.assertEqual(proc.stdout.strip(), "ok", proc.stderr)
            t = aiprof.load(out)
            escaped = "batch_\\udcff.bin"
            names = set(t.slices().name)
            self.assertIn(escaped, names)
            self.assertIn("node:" + escaped, names)
            self.assertEqual(list(t.counters().name), [escaped])
            self.assertIn(escaped, set(t.tracks().name))

    def test_decorated_generators_and_coroutines_time_their_bodies(self):
        # A span around the call timed only the creation of the generator or coroutine:
        # one 5 us "gen" span for three items that each took 10 ms, a 3 us "coro" for 20 ms.
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "deco.aiprof")
            script = textwrap.dedent("""
                import asyncio, time
                import aiprof

                @aiprof.span("gen")
                def batches():
                    for i in range(3):
                        time.sleep(0.01)  # at least 10 ms per item
                        yield i
                    return "done"

                def consume():
                    got = []
                    for b in batches():
                        with aiprof.span("consume"):
                            got.append(b)
                    return got

                @aiprof.span("coro")
                async def work():
                    await asyncio.sleep(0.02)  # at least 20 ms
                    return 5

                assert consume() == [0, 1, 2]
                g = batches()
                assert next(g) == 0
                g.close()  # closes the wrapped generator too
                assert asyncio.run(work()) == 5
                try:
                    @aiprof.node("n")
                    async def node_coro():
                        pass
                    raise AssertionError("a node decorating a coroutine did not raise")
                except TypeError:
                    pass
                aiprof.flush()
                print("ok")
            """)
            proc = run_child(script, {"AIPROF_OUTPUT": out})
            self.assertEqual(proc.stdout.strip(), "ok", proc.stderr)
            s = aiprof.load(out).slices()
            gen = s[s.name == "gen"].sort_values("ts_ns")
            # consume(): 3 items and the resumption that ends it; then next(g) once.
            self.assertEqual(len(gen), 5)
            self.assertTrue((gen.dur_ns.iloc[:3] >= 10_000_000).all(), list(gen.dur_ns))
            self.assertTrue((s[s.name == "consume"].depth == 0).all())  # not inside a "gen" span
            coro = s[s.name == "coro"]
            self.assertEqual(len(coro), 1)
            self.assertGreaterEqual(int(coro.dur_ns.iloc[0]), 20_000_000)

    def test_arguments_signatures_and_a_span_without_init(self):
        # In a child: the SDK's runtime writes a file at exit (here into a temporary folder).
        script = textwrap.dedent("""
            import inspect
            import aiprof
            from aiprof import _sdk

            def raises(exc, f, *args):
                try:
                    f(*args)
                except exc as e:
                    return str(e)
                raise AssertionError("%s%r did not raise %s" % (f, args, exc.__name__))

            r = aiprof.request("args")
            for bad in (-5, 2 ** 40, 2 ** 70):  # a negative count said only "can't convert negative int to unsigned"
                assert ("tokens(n): %d tokens" % bad) in raises(OverflowError, r.tokens, bad)
            assert "prefill(prompt_tokens): -1" in raises(OverflowError, r.prefill, -1)
            raises(TypeError, r.tokens, "x")
            r.end()
            raises(TypeError, aiprof.span, b"bytes")
            raises(ValueError, aiprof.span, "nul\\0name")

            # Span.__new__ without __init__: its name getter read a null pointer (segfault).
            s = _sdk.Span.__new__(_sdk.Span)
            raises(RuntimeError, getattr, s, "name")
            raises(RuntimeError, s.begin)

            # Signatures for inspect / Jupyter's `?` (none before: "no signature found for builtin").
            assert str(inspect.signature(aiprof.counter)) == "(name, value, /)", inspect.signature(aiprof.counter)
            assert str(inspect.signature(aiprof.Request.end)) == "(self, /, error=False)"
            for name in ("clock_ns", "counter", "enabled", "flush", "flush_to", "iteration_end",
                         "iteration_start", "mark", "output_path", "set_enabled", "thread_name"):
                inspect.signature(getattr(aiprof, name))
                assert getattr(aiprof, name).__doc__, name
            print("ok")
        """)
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, AIPROF_OUTPUT=d + "/")
            proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
            self.assertEqual((proc.returncode, proc.stdout.strip()), (0, "ok"), proc.stderr)


if __name__ == "__main__":
    unittest.main()
