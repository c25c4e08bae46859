"""The Python-frame sampler (python/aiprof/_pysampler.py) in this process.

The module is loaded from the source tree by path: it is standard library
only, and `aiprof trace` embeds the same file in its start-up hook, so it is
tested without the built package. Each test runs a real sampler thread and
checks, through threading.excepthook, that nothing reached the program.
"""
import importlib.util
import os
import sys
import tempfile
import threading
import time
import types
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location('aiprof_pysampler_under_test',
                                              os.path.join(HERE, '..', 'aiprof', '_pysampler.py'))
pysampler = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(pysampler)


def read_lines(path):
    with open(path) as f:
        return f.read().splitlines()


class PythonSamplerTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, 'python', 'py-%d.txt' % os.getpid())
        self.uncaught = []
        hook = mock.patch.object(threading, 'excepthook', lambda a: self.uncaught.append(a.exc_value))
        hook.start()
        self.addCleanup(hook.stop)
        self.addCleanup(self.tmp.cleanup)
        # A second thread of the program, parked until the test ends.
        self.release = threading.Event()
        self.helper = threading.Thread(target=self.release.wait, name='helper', daemon=True)
        self.helper.start()
        self.addCleanup(self.helper.join)
        self.addCleanup(self.release.set)

    def run_sampler(self, seconds=0.3, samples=12, deadline=20):
        # At least `seconds`, then until `samples` stack lines are flushed (a
        # starved sampler thread takes fewer rounds than 200 Hz says), or
        # `deadline` s, after which the test's own counts fail.
        sampler = pysampler.PythonSampler(self.path, 200, flush_seconds=0.05)
        start = time.monotonic()
        time.sleep(seconds)  # this thread lets the GIL go: the sampler takes rounds
        while (time.monotonic() - start < deadline and sampler.thread.is_alive() and
               sum(line.startswith('S ') for line in read_lines(self.path)) < samples):
            time.sleep(0.05)
        alive = sampler.thread.is_alive()
        sampler.stop()
        return sampler, alive, read_lines(self.path)

    def test_a_thread_without_a_native_id_is_left_out(self):
        # threading.enumerate() lists a thread whose native_id is not set yet
        # (Thread._bootstrap_inner between _set_ident and _set_native_id: a
        # DataLoader's queue feeder, D6) while sys._current_frames() already
        # has its frame. Before the fix: TypeError, the sampler thread dead.
        real = threading.enumerate

        def enumerate_():
            return [types.SimpleNamespace(ident=t.ident, native_id=None) if t is self.helper else t for t in real()]

        with mock.patch.object(threading, 'enumerate', enumerate_):
            sampler, alive, lines = self.run_sampler()
        self.assertEqual(self.uncaught, [])
        self.assertTrue(alive, 'the sampler thread is still running')
        tids = {int(line.split()[2]) for line in lines if line.startswith('S ')}
        self.assertIn(threading.get_native_id(), tids)  # this thread's stacks are written
        self.assertNotIn(self.helper.native_id, tids)
        self.assertFalse([line for line in lines if line[:2] in ('E ', 'X ')], lines[-3:])

    def test_a_failing_round_is_counted_and_sampling_goes_on(self):
        real = sys._current_frames
        calls = [0]

        def frames():
            calls[0] += 1
            if calls[0] in (2, 3, 5):
                raise RuntimeError('round %d\nbroken' % calls[0])
            return real()

        with mock.patch.object(sys, '_current_frames', frames):
            sampler, alive, lines = self.run_sampler()
        self.assertEqual(self.uncaught, [])
        self.assertTrue(alive)
        self.assertEqual(sampler.errors, 3)
        errors = [line for line in lines if line.startswith('E ')]
        self.assertEqual(errors[-1], 'E 3 RuntimeError: round 2 broken')  # the count, then the first error
        samples = [line for line in lines if line.startswith('S ')]
        self.assertGreater(len(samples), 5)
        self.assertFalse([line for line in lines if line.startswith('X ')])

    def test_a_sampler_that_keeps_failing_stops_and_says_so(self):
        def frames():
            raise ValueError('no frames')

        before = time.monotonic_ns()
        with mock.patch.object(sys, '_current_frames', frames):
            # 50 rounds at 200 Hz: a quarter of a second, more under load.
            sampler = pysampler.PythonSampler(self.path, 200, flush_seconds=0.05)
            sampler.thread.join(timeout=20)
            alive = sampler.thread.is_alive()
            sampler.stop()
        lines = read_lines(self.path)
        self.assertEqual(self.uncaught, [])
        self.assertFalse(alive, 'the sampler gave up')
        self.assertEqual(sampler.errors, pysampler.MAX_CONSECUTIVE_ERRORS)
        self.assertIn('E %d ValueError: no frames' % pysampler.MAX_CONSECUTIVE_ERRORS, lines)
        stopped = [line for line in lines if line.startswith('X ')]
        self.assertEqual(len(stopped), 1, lines)
        _, ts, reason = stopped[0].split(' ', 2)
        self.assertGreaterEqual(int(ts), before)
        self.assertEqual(reason, '%d sampling rounds in a row failed, the last with ValueError: no frames'
                         % pysampler.MAX_CONSECUTIVE_ERRORS)

    def test_an_escaping_error_ends_the_thread_with_a_record_not_a_traceback(self):
        # Anything that ends the thread outside a round (here the loop
        # itself) is still the sampler's, never the program's.
        def broken(self_):
            raise KeyError('gone')

        with mock.patch.object(pysampler.PythonSampler, 'loop', broken):
            sampler = pysampler.PythonSampler(self.path, 200, flush_seconds=0.05)
            sampler.thread.join(timeout=20)
            sampler.stop()
        self.assertEqual(self.uncaught, [])
        stopped = [line for line in read_lines(self.path) if line.startswith('X ')]
        self.assertEqual(len(stopped), 1)
        self.assertTrue(stopped[0].endswith(" the sampler failed: KeyError: 'gone'"), stopped[0])

    def test_the_sampler_names_its_own_thread_and_never_samples_it(self):
        sampler, alive, lines = self.run_sampler()
        own = sampler.thread.native_id
        self.assertIn('T %d' % own, lines)
        tids = {int(line.split()[2]) for line in lines if line.startswith('S ')}
        self.assertNotIn(own, tids)
        self.assertIn(self.helper.native_id, tids)


if __name__ == '__main__':
    unittest.main()
