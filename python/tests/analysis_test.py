"""The analysis half of the aiprof package against the CLI and independent computations.

Run by ctest (python/tests/CMakeLists.txt) with PYTHONPATH=<build>/python and
AIPROF_BIN (the aiprof CLI), AIPROF_TEST_DATA (test/data), AIPROF_FIXTURES.
The oracles here read the trace JSON with the json module and pandas; they
share no code with aiprof's importer or analyses.
"""

import decimal
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import pandas as pd

import aiprof

AIPROF = os.environ["AIPROF_BIN"]
DATA = os.environ["AIPROF_TEST_DATA"]
FIXTURES = os.environ.get("AIPROF_FIXTURES", "")
SAMPLE = os.path.join(DATA, "alexnet_a100_kineto.json.gz")
CPU_SAMPLE = os.path.join(DATA, "convnet_bs8_channels_last.kineto.json")
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def cli_json(*args):
    out = subprocess.run([AIPROF, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def summary_ops(doc):
    """The rows of the CLI's ops table from its summary JSON: the profiler's wrapper spans
    (ProfilerStep#N, ...) and device records (bands, HCCL tasks, gpu_user_annotation) left
    out, largest self time first, then total, then name (bytes)."""
    rows = [o for o in doc["ops"] if not o["profiler_wrapper"] and not o["device_record"]]
    rows.sort(key=lambda o: (-o["self_us"], -o["total_us"], o["name"].encode()))
    return rows


def us_to_ns(text):
    """Exact ns from the decimal text of a JSON number in µs."""
    return int(decimal.Decimal(text) * 1000)


def raw_events(path):
    """The trace's X events as a pandas frame, read with json (the oracle's own reading)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    rows = [(e.get("cat", ""), e["name"], e["pid"], e["tid"], int(decimal.Decimal(e["ts"]) * 1000),
             int(decimal.Decimal(e["dur"]) * 1000))
            for e in events if e.get("ph") == "X" and "dur" in e]
    df = pd.DataFrame(rows, columns=["cat", "name", "pid", "tid", "ts_ns", "dur_ns"])
    return df[df.dur_ns >= 0]


def union_ns(starts, ends):
    """Length of the union of [start, end) intervals."""
    total, cur_s, cur_e = 0, None, None
    for s, e in sorted(zip(starts, ends)):
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    return total + (cur_e - cur_s if cur_e is not None else 0)


class OpsMatchCli(unittest.TestCase):
    """aiprof.load(...).ops() equals `aiprof summary --format json --top 0` on the shipped samples."""

    def check(self, path):
        raw = subprocess.run([AIPROF, "summary", path, "--format", "json", "--top", "0"], check=True,
                             capture_output=True, text=True).stdout
        cli = json.loads(raw)
        cli_text = json.loads(raw, parse_float=decimal.Decimal)  # exact decimals of integer ns
        t = aiprof.load(path)
        ops = t.ops()
        want_ops = summary_ops(cli_text)
        self.assertEqual(len(ops), len(want_ops))
        self.assertGreater(len(ops), 10)
        for row, exact in zip(ops.itertuples(), want_ops):
            self.assertEqual((row.name, row.category, row.count), (exact["name"], exact["category"], exact["count"]))
            self.assertEqual(row.self_ns, us_to_ns(exact["self_us"]))
            self.assertEqual(row.total_ns, us_to_ns(exact["total_us"]))
            self.assertEqual(row.max_ns, us_to_ns(exact["max_us"]))
            for col in ("mean", "p50", "p99"):
                want = float(exact[col + "_us"])
                self.assertAlmostEqual(getattr(row, col + "_ns") / 1000, want, delta=1e-9 * abs(want) + 1e-6)
        # summary() is the CLI's JSON itself.
        self.assertEqual(t.summary(), cli)
        devices = t.devices()
        self.assertEqual(len(devices), len(cli["devices"]))
        for row, want in zip(devices.itertuples(), cli_text["devices"]):
            self.assertEqual((row.rank, row.device), (want["rank"], want["device"]))
            self.assertEqual(row.busy_ns, us_to_ns(want["busy_us"]))
            self.assertEqual(row.span_ns, us_to_ns(want["span_us"]))
        steps = t.steps()
        self.assertEqual(list(steps.name), [s["name"] for s in cli["steps"]])
        self.assertEqual(list(steps.ts_ns), [s["start_ns"] for s in cli["steps"]])
        return t

    def test_alexnet_gpu_sample(self):
        self.check(SAMPLE)

    def test_cpu_sample_with_steps(self):
        t = self.check(CPU_SAMPLE)
        self.assertEqual(len(t.steps()), 12)

    def test_profiler_wrappers_left_out_as_in_the_cli_table(self):
        # Each ProfilerStep#N was an op row of its own (12 rows of count 1 here, the
        # top rows by total); the CLI's ops table leaves the profiler's wrappers out.
        t = aiprof.load(CPU_SAMPLE)
        ops = t.ops()
        self.assertFalse(ops.name.astype(str).str.startswith("ProfilerStep#").any())
        self.assertEqual(len(ops), len(summary_ops(t.summary())))
        self.assertEqual(len(t.summary()["ops"]) - len(ops), 12 + 1)  # the steps and the profiler's own span
        text = subprocess.run([AIPROF, "summary", CPU_SAMPLE, "--top", "0"], check=True, capture_output=True,
                              text=True).stdout
        self.assertIn("Top %d ops by self time (of %d; profiler wrappers left out)" % (len(ops), len(ops)), text)

    def test_native_file_gives_the_same_tables(self):
        with tempfile.TemporaryDirectory() as d:
            native = os.path.join(d, "alexnet.aiprof")
            subprocess.run([AIPROF, "import", SAMPLE, "-o", native], check=True, capture_output=True)
            a, b = aiprof.load(SAMPLE), aiprof.load(native)
            pd.testing.assert_frame_equal(a.ops(), b.ops())
            pd.testing.assert_frame_equal(a.slices(), b.slices())


class ModulesTree(unittest.TestCase):
    """trace.modules(): the attribution tree as a frame, checked with pandas."""

    def test_tree_adds_up_to_the_step(self):
        t = aiprof.load(CPU_SAMPLE)
        m = t.modules()
        self.assertGreater(len(m), 0)
        # Each node's total = its self time + its children's totals (parent = row index).
        kids = m[m.parent >= 0].groupby("parent")["total_ns"].sum()
        expect = m["self_ns"] + kids.reindex(m.index, fill_value=0)
        self.assertTrue(((m["total_ns"] - expect).abs() < 1e-3).all())
        # The top-level nodes add up to the mean steady step, inside the steps' range.
        wall = m.loc[m.depth == 0, "total_ns"].sum()
        steps = t.steps()
        self.assertGreaterEqual(wall, steps.dur_ns.min() - 1e-3)
        self.assertLessEqual(wall, steps.dur_ns.max() + 1e-3)
        self.assertAlmostEqual(m.loc[m.depth == 0, "share"].sum(), 1.0, places=9)
        # Profiler wrappers are structure, never nodes.
        self.assertFalse(m.name.str.startswith("ProfilerStep#").any())
        self.assertFalse(m.name.str.startswith("PyTorch Profiler (").any())
        self.assertIn("op", set(m.kind))


NSYS = os.path.join(FIXTURES, "nsys", "perlmutter-cloverleaf-cuda.sqlite") if FIXTURES else ""


@unittest.skipUnless(NSYS and os.path.exists(NSYS), "fixtures not present")
class Samples(unittest.TestCase):
    """trace.samples() (Nsight Systems' sampled call chains, a real export) against the
    summary's host_samples and against the raw SQL tables, counted with pandas."""

    @classmethod
    def setUpClass(cls):
        cls.t = aiprof.load(NSYS)
        cls.s = cls.t.samples()
        cls.h = cls.t.summary()["host_samples"]

    def test_rows_are_the_sql_samples(self):
        s = self.s
        raw = self.t.sql("SELECT ts, track, callsite, weight_ns FROM samples ORDER BY id")
        self.assertEqual(len(s), len(raw))
        self.assertGreater(len(s), 1000)
        np.testing.assert_array_equal(s.ts_ns.to_numpy(), raw.ts.to_numpy())
        np.testing.assert_array_equal(s.track.to_numpy(), raw.track.to_numpy())
        # The leaf is the stack's last frame; the stack walks stack_frames up to the root.
        frames = self.t.sql("SELECT id, parent, frame FROM stack_frames").set_index("id")
        for i in range(0, len(s), 97):
            chain, c = [], raw.callsite.iloc[i]
            while c == c and c is not None:  # NULL: NaN
                chain.append(frames.frame[int(c)])
                c = frames.parent[int(c)]
            self.assertEqual(str(s.callstack.iloc[i]), ";".join(reversed(chain)))
            self.assertEqual(str(s.leaf.iloc[i]), chain[0] if chain else "")

    def test_summary_counts_equal_pandas(self):
        s, h = self.s, self.h
        self.assertEqual(h["samples"], len(s))
        self.assertEqual(h["with_stack"], int((s.callstack.astype(str) != "").sum()))
        self.assertEqual(h["with_python"], int(s.python.sum()))
        self_counts = s[s.callstack.astype(str) != ""].groupby(["leaf", "module"], observed=True).size()
        top = self_counts.sort_values(ascending=False)
        self.assertEqual([f["self_samples"] for f in h["top_self"][:10]], list(top.iloc[:10]))
        for f in h["top_self"][:10]:
            self.assertEqual(f["self_samples"], self_counts[(f["function"], f["module"])])
        # Total: samples whose stack holds the function (by name; names unique per module here).
        stacks = s.callstack.astype(str).str.split(";")
        for f in h["top_total"][:5]:
            self.assertEqual(f["total_samples"], int(stacks.map(lambda fr: f["function"] in fr).sum()), f["function"])
        per_thread = s.groupby("track").size()
        self.assertEqual({t["track"]: t["samples"] for t in h["threads"]}, per_thread.to_dict())
        self.assertEqual(round(h["sampled_us"] * 1000), int(s.weight_ns.sum()))


class TablesMatchIndependentPandas(unittest.TestCase):
    """The tables, and HTA-style breakdowns built on them, against pandas over the raw JSON."""

    @classmethod
    def setUpClass(cls):
        cls.t = aiprof.load(SAMPLE)
        cls.raw = raw_events(SAMPLE)
        cls.slices = cls.t.slices()

    def test_slices_are_the_x_events(self):
        s, raw = self.slices, self.raw
        self.assertEqual(len(s), len(raw))
        self.assertEqual(int(s.dur_ns.sum()), int(raw.dur_ns.sum()))
        plain = s.astype({"category": str, "name": str})  # categoricals sort by code, not text
        ours = plain.groupby(["category", "name"]).dur_ns.agg(["count", "sum"]).sort_index()
        theirs = raw.groupby(["cat", "name"]).dur_ns.agg(["count", "sum"]).sort_index()
        self.assertEqual(ours.values.tolist(), theirs.values.tolist())
        self.assertEqual(list(ours.index), list(theirs.index))
        self.assertIsInstance(s.name.dtype, pd.CategoricalDtype)
        self.assertEqual(s.ts_ns.dtype, np.int64)

    def test_kernel_breakdown(self):
        """HTA's get_gpu_kernel_breakdown: time per kernel name and its share of all kernel time."""
        ours = self.slices[self.slices.kind == "kernel"].groupby("name", observed=True).dur_ns.sum()
        raw = self.raw[self.raw.cat == "kernel"].groupby("name").dur_ns.sum()
        self.assertEqual(ours.sort_index().to_dict(), raw.sort_index().to_dict())
        self.assertGreater(len(ours), 5)

    def test_temporal_breakdown(self):
        """HTA's get_temporal_breakdown: idle = span - busy, with busy the union of device activity."""
        dev = self.raw[self.raw.cat.isin(DEVICE_CATS)]
        busy = union_ns(dev.ts_ns, dev.ts_ns + dev.dur_ns)
        span = int((dev.ts_ns + dev.dur_ns).max() - dev.ts_ns.min())
        d = self.t.devices()
        self.assertEqual(len(d), 1)
        self.assertEqual(int(d.busy_ns[0]), busy)
        self.assertEqual(int(d.span_ns[0]), span)
        self.assertAlmostEqual(float(d.utilization[0]), busy / span, places=12)  # its base, as the docstring says
        self.assertIn("busy_ns / span_ns", aiprof.Trace.devices.__doc__)
        metrics = self.t.analyze(only=["breakdown"])["metrics"]
        self.assertAlmostEqual(metrics["device_idle_ratio"]["value"], 1 - busy / span, places=12)
        kernels = dev[dev.cat == "kernel"]
        compute = union_ns(kernels.ts_ns, kernels.ts_ns + kernels.dur_ns)
        self.assertAlmostEqual(metrics["compute_ratio"]["value"], compute / span, places=12)

    def test_idle_gaps_per_stream(self):
        """HTA's get_idle_time_breakdown counts gaps between consecutive kernels of a stream."""
        s = self.slices[self.slices.kind.isin(["kernel", "memcpy", "memset"])].sort_values(["tid", "ts_ns"])
        end = s.ts_ns + s.dur_ns
        gaps = (s.ts_ns - end.groupby(s.tid).shift().fillna(s.ts_ns.iloc[0]).astype("int64")).clip(lower=0)
        dev = self.raw[self.raw.cat.isin(DEVICE_CATS)].sort_values(["tid", "ts_ns"])
        raw_end = dev.ts_ns + dev.dur_ns
        raw_gaps = (dev.ts_ns - raw_end.groupby(dev.tid).shift().fillna(dev.ts_ns.iloc[0]).astype("int64")).clip(lower=0)
        self.assertEqual(int(gaps.sum()), int(raw_gaps.sum()))
        self.assertGreater(int(gaps.sum()), 0)

    def test_tracks_join(self):
        tracks = self.t.tracks()
        s = self.slices
        self.assertTrue((tracks.device.values[s.track.values] == s.device.values).all())
        self.assertIn("device", set(tracks.layer))


class WithoutPandas(unittest.TestCase):
    def test_numpy_dicts(self):
        t = aiprof.load(SAMPLE)
        ops = t.ops(as_frame=False)
        self.assertIsInstance(ops, dict)
        self.assertIsInstance(ops["total_ns"], np.ndarray)
        self.assertEqual(ops["name"].dtype, object)
        frame = t.ops()
        self.assertEqual(list(ops["name"]), list(frame.name))
        self.assertEqual(ops["total_ns"].tolist(), frame.total_ns.tolist())

    def test_every_table_gives_numpy_arrays(self):
        # modules()'s string columns were Python lists (and object columns in pandas).
        t = aiprof.load(os.path.join(DATA, "resnet50_num_workers_0.pt.trace.json.gz"))
        for table in ("ops", "slices", "steps", "devices", "tracks", "counters", "flows", "modules", "samples"):
            columns = getattr(t, table)(as_frame=False)
            frame = getattr(t, table)()
            for name, column in columns.items():
                with self.subTest(table=table, column=name):
                    self.assertIsInstance(column, np.ndarray)
                    self.assertEqual(list(column), list(frame[name]))
                    if column.dtype == object:
                        self.assertIsInstance(frame[name].dtype, pd.CategoricalDtype)
        self.assertGreater(len(t.modules()), 0)

    def test_import_without_pandas_installed(self):
        """A child interpreter where `import pandas` fails still gets numpy tables."""
        code = ("import sys; sys.modules['pandas'] = None\n"
                "import aiprof\n"
                "t = aiprof.load(sys.argv[1]); s = t.slices()\n"
                "assert isinstance(s, dict) and len(s['ts_ns']) > 0, type(s)\n"
                "print(len(s['ts_ns']))\n")
        out = subprocess.run([sys.executable, "-c", code, SAMPLE], check=True, capture_output=True, text=True)
        self.assertEqual(int(out.stdout), len(aiprof.load(SAMPLE).slices()))


class AnalysisAloneRecordsNothing(unittest.TestCase):
    def test_no_sdk_runtime_and_no_file(self):
        """`import aiprof` for analysis does not start the SDK runtime (which writes a file at exit)."""
        code = ("import sys, aiprof\n"
                "aiprof.load(sys.argv[1]).ops()\n"
                "assert 'aiprof._sdk' not in sys.modules\n")
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([sys.executable, "-c", code, SAMPLE], check=True, cwd=d)
            self.assertEqual(os.listdir(d), [])


class AnalyzeDiagnoseValidate(unittest.TestCase):
    def test_analyze_matches_cli(self):
        ours = aiprof.load(SAMPLE).analyze()
        cli = cli_json("analyze", SAMPLE, "--format", "json")
        self.assertEqual(ours["metrics"], cli["metrics"])
        self.assertEqual(ours["unavailable"], cli["unavailable"])
        self.assertIn("step_time_mean_ns", ours["unavailable"])  # no steps in this trace: a reason, not a zero
        with self.assertRaises(ValueError):
            aiprof.load(SAMPLE).analyze(only=["no_such_analysis"])

    def test_diagnose_matches_cli_suggest(self):
        t = aiprof.load(SAMPLE)
        ours = t.diagnose(target="throughput", constraints=["effort<=medium"])
        with tempfile.TemporaryDirectory() as d:
            # An empty knowledge-card database location, so the CLI attaches no history either.
            cli = cli_json("suggest", SAMPLE, "--format", "json", "--target", "throughput",
                           "--constraints", "effort<=medium", "--db", os.path.join(d, "none.db"))
        self.assertEqual(ours, cli)
        self.assertGreater(len(ours["findings"]), 0)
        with self.assertRaises(aiprof.Error):
            t.diagnose(constraints="memory<<3")
        with self.assertRaises(ValueError):
            t.diagnose(target="speed")

    def test_validate_matches_cli(self):
        ours = aiprof.validate(CPU_SAMPLE, aiprof.load(CPU_SAMPLE), metrics=["latency", "p50"])
        cli = cli_json("validate", "--before", CPU_SAMPLE, "--after", CPU_SAMPLE, "--metrics", "latency,p50",
                       "--format", "json")
        self.assertEqual(ours["overall"], cli["overall"])
        self.assertEqual([m["verdict"] for m in ours["metrics"]], [m["verdict"] for m in cli["metrics"]])
        self.assertEqual(ours["overall"], "no_change")
        with self.assertRaises(aiprof.Error):
            aiprof.validate(CPU_SAMPLE, CPU_SAMPLE, metrics=["speediness"])

    def test_validate_of_two_traces_equals_cli_with_its_prediction(self):
        # The CLI checks the before run's prediction of the fix the after run applied
        # ("prediction": dataloader_workers here); the package left it out (null).
        before = os.path.join(DATA, "resnet50_num_workers_0.pt.trace.json.gz")
        after = os.path.join(DATA, "resnet50_num_workers_4.pt.trace.json.gz")
        cli = cli_json("validate", "--before", before, "--after", after, "--format", "json")
        self.assertEqual(cli["prediction"]["fix"], "dataloader_workers")
        self.assertEqual(aiprof.validate(before, after), cli)
        loaded = aiprof.validate(aiprof.load(before), aiprof.load(after))
        self.assertEqual(loaded["prediction"], cli["prediction"])
        self.assertEqual(loaded["metrics"], cli["metrics"])

    def test_validate_several_runs_matches_cli(self):
        # Lists of runs, as repeated --before/--after: the run is the unit.
        rounds = os.path.join(DATA, "pairs", "jemalloc_retain_rounds")
        b = [os.path.join(rounds, "r%d" % r, "unfused_gelu_before.pt.trace.json.gz") for r in range(1, 4)]
        a = [os.path.join(rounds, "r%d" % r, "unfused_gelu_after.pt.trace.json.gz") for r in range(1, 4)]
        ours = aiprof.validate(b, [aiprof.load(a[0])] + a[1:], metrics=["latency"])
        args = ["validate", "--metrics", "latency", "--format", "json"]
        for x in b:
            args += ["--before", x]
        for x in a:
            args += ["--after", x]
        cli = cli_json(*args)
        m, c = ours["metrics"][0], cli["metrics"][0]
        self.assertEqual((m["n_before"], m["n_after"]), (3, 3))
        self.assertEqual(m["statistic"], "mean of the runs' means")
        self.assertEqual((m["verdict"], m["p_value"], m["before"], m["after"]),
                         (c["verdict"], c["p_value"], c["before"], c["after"]))
        with self.assertRaises(ValueError):
            aiprof.validate([], CPU_SAMPLE)


    def test_validate_several_runs_gives_the_clis_pooled_prediction(self):
        # Three runs a side of the layout_roundtrip pair: the CLI infers the fix
        # (channels_last_end_to_end) and pools its prediction over the runs; the
        # package gave "prediction": None for lists of runs. Same JSON now, whether
        # a run is a loaded Trace or a path.
        rounds = os.path.join(DATA, "pairs", "jemalloc_retain_rounds")
        b = [os.path.join(rounds, "r%d" % r, "layout_roundtrip_before.pt.trace.json.gz") for r in range(1, 4)]
        a = [os.path.join(rounds, "r%d" % r, "layout_roundtrip_after.pt.trace.json.gz") for r in range(1, 4)]
        with tempfile.TemporaryDirectory() as d:
            # An empty knowledge-card database, so the CLI corrects by no history either.
            args = ["validate", "--format", "json", "--db", os.path.join(d, "none.db")]
            for x in b:
                args += ["--before", x]
            for x in a:
                args += ["--after", x]
            cli = cli_json(*args)
        p = cli["prediction"]
        self.assertEqual((p["fix"], p["before_runs"], p["after_runs"]), ("channels_last_end_to_end", 3, 3))
        self.assertEqual(aiprof.validate(b, a), cli)
        loaded = aiprof.validate([aiprof.load(b[0])] + b[1:], a[:2] + [aiprof.load(a[2])])
        self.assertEqual(loaded["prediction"], cli["prediction"])
        self.assertEqual(loaded["notes"], cli["notes"])

    def test_validate_warmup_steps_as_the_clis_flag(self):
        # The package had no warmup_steps (the CLI's --warmup-steps): its samples always
        # left detected warm-up out. Now the same JSON as the CLI for 0 (keep all) and 2.
        b = os.path.join(DATA, "resnet50_num_workers_0.pt.trace.json.gz")
        a = os.path.join(DATA, "resnet50_num_workers_4.pt.trace.json.gz")
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "none.db")
            for n in (0, 2):
                cli = cli_json("validate", "--format", "json", "--db", db, "--before", b, "--after", a,
                               "--warmup-steps", str(n))
                self.assertEqual(aiprof.validate(b, a, warmup_steps=n), cli)
                # And from loaded traces: the same samples.
                ours = aiprof.validate(aiprof.load(b), aiprof.load(a), warmup_steps=n)
                self.assertEqual(ours["metrics"], cli["metrics"])
        kept = aiprof.validate(b, a, warmup_steps=0)["metrics"][0]
        two_out = aiprof.validate(b, a, warmup_steps=2)["metrics"][0]
        self.assertEqual(kept["n_before"] - two_out["n_before"], 2)
        with self.assertRaisesRegex(ValueError, "warmup_steps"):
            aiprof.validate(b, a, warmup_steps=-2)

    def test_validate_scenario_as_the_clis_flag(self):
        # The package had no scenario (the CLI's --scenario and --statistic): a fix
        # stated as a what-if scenario could be checked on the CLI only. Same JSON
        # now, with an empty knowledge database for the CLI (the package reads none).
        b = os.path.join(DATA, "resnet50_num_workers_0.pt.trace.json.gz")
        a = os.path.join(DATA, "resnet50_num_workers_4.pt.trace.json.gz")
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "none.db")
            for sc, st in (("overlap-data-loading 4", ""), ("remove-idle data_loading", "mean")):
                args = ["validate", "--format", "json", "--db", db, "--before", b, "--after", a, "--scenario", sc]
                cli = cli_json(*(args + (["--statistic", st] if st else [])))
                ours = aiprof.validate(b, a, scenario=sc, statistic=st)
                self.assertEqual(ours, cli)
                self.assertEqual(ours["prediction"]["scenario"], sc)
        with self.assertRaisesRegex(ValueError, "statistic needs scenario"):
            aiprof.validate(b, a, statistic="mean")
        with self.assertRaisesRegex(ValueError, "not both"):
            aiprof.validate(b, a, scenario="remove aten::mm", fix_id="dataloader_workers")
        with self.assertRaises(aiprof.Error) as e:
            aiprof.validate(b, a, scenario="scale aten::mm x")
        self.assertIn("FACTOR must be a number", str(e.exception))

    def test_validate_refuses_one_run_given_twice_as_the_cli_does(self):
        # The package counted one file three times as three independent runs
        # (trial_py, helper 96); the CLI refuses. Both call CheckDistinctRuns now.
        rounds = os.path.join(DATA, "pairs", "jemalloc_retain_rounds")
        x = os.path.join(rounds, "r1", "layout_roundtrip_before.pt.trace.json.gz")
        y = os.path.join(rounds, "r1", "layout_roundtrip_after.pt.trace.json.gz")
        with self.assertRaisesRegex(aiprof.Error, r"before run 2 .* is the same file as run 1"):
            aiprof.validate([x, x], [y])
        # A loaded trace is its file; a copy is caught by its content.
        with tempfile.TemporaryDirectory() as d:
            copy = os.path.join(d, "copy.pt.trace.json.gz")
            shutil.copyfile(y, copy)
            with self.assertRaisesRegex(aiprof.Error, r"after run 2 .* is a copy \(same content\) of run 1"):
                aiprof.validate([x], [aiprof.load(y), copy])
        with self.assertRaisesRegex(aiprof.Error, r"before run 2 .* is the same file as run 1"):
            aiprof.validate([aiprof.load(x), x], [y])

    def test_validate_names_fix_id_as_its_argument(self):
        # Named: the same check as --fix-id; unknown: the error lists the ids.
        rounds = os.path.join(DATA, "pairs", "jemalloc_retain_rounds")
        tr = lambda r, v: os.path.join(rounds, "r%d" % r, "unfused_gelu_%s.pt.trace.json.gz" % v)
        b, a = [tr(r, "before") for r in (1, 2, 3)], [tr(r, "after") for r in (1, 2, 3)]
        ours = aiprof.validate(b, a, metrics=["latency"])
        self.assertNotIn("prediction", ours)
        self.assertTrue(any(n.endswith("name it with fix_id=") for n in ours["notes"]), ours["notes"])
        named = aiprof.validate(b, a, metrics=["latency"], fix_id="pin_allocator")
        self.assertEqual((named["prediction"]["fix"], named["prediction"]["before_runs"]), ("pin_allocator", 3))
        with self.assertRaises(aiprof.Error):
            aiprof.validate(b, a, fix_id="no_such_fix")


    def test_validate_errors_name_the_packages_arguments(self):
        # The errors came from code the CLI shares and named its flags:
        # "no span named 'nope' (--unit) in the trace".
        cases = [
            (dict(before=CPU_SAMPLE, after=CPU_SAMPLE, unit="nope"), "no span named 'nope' (unit=)"),
            (dict(before=SAMPLE, after=SAMPLE), 'choose spans with unit="NAME"'),  # no steps in this trace
            (dict(before=CPU_SAMPLE, after=CPU_SAMPLE, fix_id="no_such_fix"), "fix_id='no_such_fix': the before run"),
        ]
        with tempfile.TemporaryDirectory() as d:
            bench = os.path.join(d, "bench.json")
            with open(bench, "w") as f:
                f.write("[1.0, 1.1, 1.2]")  # a benchmark result file: samples in ms
            cases.append((dict(before=bench, after=bench, unit="forward"), "unit= selects spans in traces"))
            for kwargs, says in cases:
                with self.subTest(says):
                    with self.assertRaises(aiprof.Error) as e:
                        aiprof.validate(**kwargs)
                    self.assertIn(says, str(e.exception))
                    self.assertNotIn("--", str(e.exception))


class BadInput(unittest.TestCase):
    def test_missing_file(self):
        with self.assertRaises(aiprof.Error) as e:
            aiprof.load("/nonexistent/trace.json")
        self.assertIn("/nonexistent/trace.json", str(e.exception))

    def test_bytes_and_pathlib_paths(self):
        # os.fspath(b"...") is bytes, which str() made "b'...'": a bytes path
        # opened a file of that literal name. Any path-like works, as open() does.
        import pathlib
        want = aiprof.load(SAMPLE).ops()
        pd.testing.assert_frame_equal(aiprof.load(os.fsencode(SAMPLE)).ops(), want)
        pd.testing.assert_frame_equal(aiprof.load(pathlib.Path(SAMPLE)).ops(), want)
        with self.assertRaises(aiprof.Error) as e:
            aiprof.load(b"/nonexistent/trace.json")
        self.assertIn("/nonexistent/trace.json", str(e.exception))
        self.assertNotIn("b'", str(e.exception))

    def test_a_file_name_that_is_not_utf8(self):
        # b"\xff.json" (or os.fsdecode of it, as os.listdir gives) raised UnicodeEncodeError or
        # TypeError from every entry point; the error of a missing one UnicodeDecodeError.
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(os.fsencode(d), b"\xff.json")
            shutil.copy(CPU_SAMPLE, raw)
            want = len(aiprof.load(CPU_SAMPLE).slices())
            for path in (raw, os.fsdecode(raw), [raw]):
                with self.subTest(path=path):
                    t = aiprof.load(path)
                    self.assertEqual(len(t.slices()), want)
                    self.assertEqual(t.path, os.fsdecode(raw))
                    self.assertEqual(t.metadata["source_path"], os.fsdecode(raw).encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            self.assertIn("overall", aiprof.validate(raw, os.fsdecode(raw)))
            with self.assertRaises(aiprof.Error) as e:
                aiprof.load(CPU_SAMPLE).diagnose(rules=raw)  # read, not refused: not a rule file
            self.assertIn("\\xff.json", str(e.exception))
            with self.assertRaises(aiprof.Error) as e:
                aiprof.load(os.path.join(os.fsencode(d), b"\xfe.json"))
            self.assertIn("\\xfe.json: no such file", str(e.exception))

    def test_truncated_gzip(self):
        with open(SAMPLE, "rb") as f:
            data = f.read()
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "cut.json.gz")
            with open(path, "wb") as f:
                f.write(data[: len(data) // 2])
            with self.assertRaises(aiprof.Error) as e:
                aiprof.load(path)
            self.assertIn("cut.json.gz", str(e.exception))

    def test_hostile_names_round_trip(self):
        """Hand-made trace: names come back as written (no escaping in data), invalid UTF-8 replaced."""
        hostile = "</script><img src=x onerror=alert(1)>"
        doc = {"traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": hostile, "pid": 1, "tid": 1, "ts": 1, "dur": 2},
            {"ph": "X", "cat": "cpu_op", "name": "ok \u00e9", "pid": 1, "tid": 1, "ts": 4, "dur": 1},
        ]}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "hostile.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            t = aiprof.load(path)
            self.assertEqual(sorted(t.slices().name), sorted([hostile, "ok \u00e9"]))
            self.assertEqual(t.ops().name.iloc[0], hostile)


class ArgumentChecks(unittest.TestCase):
    """Arguments the CLI's flags refuse are refused here too, never silently changed."""

    STEPS_BEFORE = os.path.join(DATA, "resnet50_num_workers_0.pt.trace.json.gz")
    STEPS_AFTER = os.path.join(DATA, "resnet50_num_workers_4.pt.trace.json.gz")

    def test_a_nul_in_a_path_is_refused_not_cut(self):
        # "real\0junk" reached open() as "real": the file before the NUL was loaded.
        with tempfile.TemporaryDirectory() as d:
            real = os.path.join(d, "real.json")
            shutil.copy(CPU_SAMPLE, real)
            for call in (lambda p: aiprof.load(p), lambda p: aiprof.load([p]),
                         lambda p: aiprof.validate(p, CPU_SAMPLE),
                         lambda p: aiprof.load(CPU_SAMPLE).diagnose(rules=p)):
                for path in (real + "\0junk", os.fsencode(real) + b"\0junk"):
                    with self.subTest(path=path):
                        with self.assertRaises(ValueError) as e:
                            call(path)
                        self.assertIn("null", str(e.exception))

    def test_sql_limits_out_of_range(self):
        t = aiprof.load(self.STEPS_BEFORE)
        q = "select count(*) as n from slices where name like '%conv%'"
        want = int(t.sql(q, timeout=0).n[0])
        with self.assertRaises(aiprof.Error):  # the query reaches the time check
            t.sql(q, timeout=1e-9)
        # inf (no limit, as 0) and very long limits stopped at once: "after the time limit (inf s)".
        for timeout in (float("inf"), 1e12, 1e300):
            with self.subTest(timeout=timeout):
                self.assertEqual(int(t.sql(q, timeout=timeout).n[0]), want)
        # NaN and negative limits meant none, silently.
        for kwargs in ({"timeout": float("nan")}, {"timeout": -1.0}, {"max_memory": -1}):
            with self.subTest(**kwargs):
                with self.assertRaises(ValueError) as e:
                    t.sql("select 1 as x", **kwargs)
                self.assertIn(next(iter(kwargs)), str(e.exception))

    def test_validate_metrics_takes_one_name(self):
        # A str was iterated letter by letter: "unknown metric 'l'".
        want = aiprof.validate(self.STEPS_BEFORE, self.STEPS_AFTER, metrics=["p99"])
        self.assertEqual(aiprof.validate(self.STEPS_BEFORE, self.STEPS_AFTER, metrics="p99"), want)

    def test_validate_numbers_the_cli_refuses(self):
        # batch_size -8 or NaN was dropped (throughput in samples/s), inf made every figure None;
        # min_effect inf judged every change 'no_change'; resamples had no ceiling (the CLI's is
        # 1,000,000: 2**31 - 1 ran for an hour, uninterruptible).
        cases = [({"batch_size": -8.0}, "batch_size"), ({"batch_size": float("nan")}, "batch_size"),
                 ({"batch_size": float("inf")}, "batch_size"), ({"min_effect": float("inf")}, "min_effect"),
                 ({"min_effect": float("nan")}, "min_effect"), ({"resamples": 1000001}, "resamples"),
                 ({"alpha": 1e-300}, "alpha")]
        for kwargs, says in cases:
            with self.subTest(**kwargs):
                with self.assertRaises(ValueError) as e:
                    aiprof.validate(self.STEPS_BEFORE, self.STEPS_AFTER, test="welch", **kwargs)
                self.assertIn(says, str(e.exception))
        ok = aiprof.validate(self.STEPS_BEFORE, self.STEPS_AFTER, metrics=["throughput"], batch_size=8,
                             resamples=1000000, test="welch", alpha=1e-9)
        self.assertEqual(ok["metrics"][0]["unit"], "items/s")


class Interrupt(unittest.TestCase):
    def test_ctrl_c_stops_a_query_without_a_time_limit(self):
        """SIGINT during t.sql(..., timeout=0) raises KeyboardInterrupt; the query ran on to its end
        (here: counting to 10**12) with Ctrl-C ignored."""
        script = ("import sys, aiprof\n"
                  "t = aiprof.load(sys.argv[1])\n"
                  "print('ready', flush=True)\n"
                  "try:\n"
                  "    t.sql('with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000000000) '\n"
                  "          'select count(*) as n from c', timeout=0)\n"
                  "except KeyboardInterrupt:\n"
                  "    print('interrupted', flush=True)\n"
                  "    t.sql('select 1 as x')  # the trace's engine still answers\n"
                  "    print('usable', flush=True)\n")
        p = subprocess.Popen([sys.executable, "-c", script, SAMPLE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
            time.sleep(0.5)  # into the query
            p.send_signal(2)
            out, err = p.communicate(timeout=120)  # the uninterrupted query takes hours
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        self.assertEqual(out.split(), ["interrupted", "usable"], err)
        self.assertEqual(p.returncode, 0, err)


class Threads(unittest.TestCase):
    def test_concurrent_loads_and_summaries(self):
        """The GIL is released while importing: loads in threads all finish with the same figures."""
        results, errors = [None] * 4, []

        def work(i):
            try:
                t = aiprof.load(SAMPLE)
                results[i] = (int(t.ops().total_ns.sum()), len(t.slices()))
            except Exception as e:  # reported below
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(set(results)), 1)

    def test_one_trace_shared_by_threads(self):
        t = aiprof.load(SAMPLE)
        out = []
        threads = [threading.Thread(target=lambda: out.append(t.summary()["totals"]["ops"])) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(len(set(out)), 1)


    def test_table_fills_release_the_gil(self):
        """A table's columns are filled with the GIL released, so another thread runs meanwhile.

        The switch interval is made huge, so the main thread never hands the GIL
        over on its own: the helper thread can observe `inside` only if the native
        call itself releases the GIL. Held throughout (the table fills before),
        it saw it 0 times, deterministically."""
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "wide.json")
            with open(path, "w") as f:  # 200,000 slices: above the extension's 65,536-row threshold
                f.write('{"traceEvents":[')
                f.write(",".join('{"ph":"X","cat":"cpu_op","name":"op%d","pid":1,"tid":1,"ts":%d,"dur":1}'
                                 % (i % 7, 2 * i) for i in range(200000)))
                f.write("]}")
            t = aiprof.load(path)
        state = {"inside": False, "done": False, "hits": 0}

        def watch():
            while not state["done"]:
                if state["inside"]:
                    state["hits"] += 1
                time.sleep(0)  # hands the GIL back
        old = sys.getswitchinterval()
        sys.setswitchinterval(1000.0)
        try:
            th = threading.Thread(target=watch)
            th.start()
            for _ in range(20):  # each call releases it once per column; one hit is enough
                state["inside"] = True
                columns = t._t.slice_columns()
                state["inside"] = False
                if state["hits"]:
                    break
            state["done"] = True
            th.join()
        finally:
            sys.setswitchinterval(old)
        self.assertGreater(state["hits"], 0)
        self.assertEqual(len(columns["ts_ns"]), 200000)
        self.assertEqual(int(columns["ts_ns"][-1]), 2 * 199999 * 1000)


class ApiForms(unittest.TestCase):
    def test_analyze_only_takes_one_name(self):
        # A str was iterated letter by letter: "unknown analysis 'b'".
        t = aiprof.load(SAMPLE)
        self.assertEqual(t.analyze(only="breakdown"), t.analyze(only=["breakdown"]))
        with self.assertRaises(ValueError) as e:
            t.analyze(only="nosuch")
        self.assertIn("'nosuch'", str(e.exception))

    def test_sql_schema_names_the_tables(self):
        schema = aiprof.sql_schema()
        for table in ("slices:", "tracks:", "args:"):
            self.assertIn(table, schema)
        self.assertEqual(schema, subprocess.run([AIPROF, "query", SAMPLE, "--schema"], check=True,
                                                capture_output=True, text=True).stdout)
        n = aiprof.load(SAMPLE).sql("select count(*) as n from slices")
        self.assertEqual(int(n.n[0]), 868)

    def test_error_is_documented(self):
        self.assertTrue(issubclass(aiprof.Error, RuntimeError))
        self.assertIn("names the file", aiprof.Error.__doc__)


@unittest.skipUnless(FIXTURES and os.path.isdir(os.path.join(FIXTURES, "kineto")), "fixtures not present")
class RealFixtures(unittest.TestCase):
    def test_every_kineto_fixture_ops_equal_cli(self):
        folder = os.path.join(FIXTURES, "kineto")
        names = sorted(n for n in os.listdir(folder) if n.endswith(".json.gz"))
        self.assertGreater(len(names), 5)
        for name in names:
            path = os.path.join(folder, name)
            with self.subTest(name):
                cli = cli_json("summary", path, "--format", "json", "--top", "0")
                ops = aiprof.load(path).ops()
                self.assertEqual(list(zip(ops.name, ops.category, ops["count"])),
                                 [(o["name"], o["category"], o["count"]) for o in summary_ops(cli)])

    def test_nsys_and_torch_npu_inputs(self):
        """Other importers through the same load: Nsight Systems SQLite and a torch_npu folder."""
        for path in (os.path.join(FIXTURES, "nsys", "perlmutter-cloverleaf-cuda.sqlite"),
                     os.path.join(FIXTURES, "ascend-pt", "level0", "rank0_ascend_pt")):
            with self.subTest(path):
                cli = cli_json("summary", path, "--format", "json", "--top", "0")
                t = aiprof.load(path)
                ops = t.ops()
                self.assertGreater(len(ops), 10)
                self.assertEqual(list(zip(ops.name, ops.category, ops["count"])),
                                 [(o["name"], o["category"], o["count"]) for o in summary_ops(cli)])
                self.assertEqual(len(t.devices()), len(cli["devices"]))


if __name__ == "__main__":
    unittest.main()
