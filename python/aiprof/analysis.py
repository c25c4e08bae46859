"""Trace analysis: load any trace aiprof imports and read it as tables.

    import aiprof
    t = aiprof.load("test/data/alexnet_a100_kineto.json.gz")
    t.ops().head()                  # per-op statistics, largest self time first
    t.slices().query("kind == 'kernel'").groupby("name").dur_ns.sum()
    t.diagnose(target="latency")["findings"]

Tables are pandas DataFrames when pandas is importable, else dicts of numpy
arrays (string columns then hold numpy object arrays). Every column is built
from the model's columns in one copy; strings come as pandas categoricals
whose categories hold each distinct string once. All times are integer
nanoseconds (`*_ns`) except in `summary()`, which is the JSON of
`aiprof summary --format json --top 0` (microseconds, docs/summary-schema.md).
"""

import json
import os

import numpy as np

from . import _aiprof

try:
    import pandas as _pd
except ImportError:  # pandas is optional
    _pd = None

Error = _aiprof.Error
Error.__doc__ = ("Bad input or a failed analysis: a missing or unreadable trace, a malformed file (the message names "
                 "the file and the place), a bad constraint, rule file or query. A RuntimeError.")


def _table(columns, as_frame):
    """Turns the extension's {name: array | ("categorical", codes, categories)} into a table."""
    use_pandas = _pd is not None if as_frame is None else as_frame
    if use_pandas and _pd is None:
        raise ImportError("pandas is not installed; call with as_frame=False for numpy arrays")
    out = {}
    for name, col in columns.items():
        if isinstance(col, tuple):
            _, codes, categories = col
            if use_pandas:
                col = _pd.Categorical.from_codes(codes, categories=categories)
            else:
                col = np.array(categories, dtype=object)[codes] if len(categories) else np.array([], dtype=object)
        out[name] = col
    if use_pandas:
        return _pd.DataFrame(out, copy=False)
    return out


def _path(p):
    """A path-like as the bytes aiprof opens; a NUL in it raises ValueError, as open() does
    (the C++ side would open the file named by the text before it)."""
    p = os.fsencode(p)  # bytes: a file name need not be UTF-8
    if b"\0" in p:
        raise ValueError("aiprof: embedded null character in path %r" % os.fsdecode(p))
    return p


def _json(data):
    return json.loads(data.decode("utf-8", errors="replace"))


class Trace:
    """A trace imported into aiprof's model (see `load`)."""

    def __init__(self, native):
        self._t = native

    def __repr__(self):
        return "<aiprof.Trace %r: %d slices>" % (self.path, self._t.slice_count)

    @property
    def path(self):
        """The file or folder the trace was loaded from."""
        return os.fsdecode(self._t.path)

    @property
    def metadata(self):
        """Facts about the run (rank, world size, device, source format) as a dict."""
        return self._t.metadata

    def summary(self):
        """The figures of `aiprof summary --format json --top 0`, as a dict (microseconds)."""
        return _json(self._t.summary_json())

    def ops(self, as_frame=None):
        """Per (category, name): count, self, total, mean, p50, p99, max in ns; the rows of
        `aiprof summary`'s ops table: largest self time first, the profiler's wrapper spans
        (ProfilerStep#N, "PyTorch Profiler", ...) left out (steps are `steps()`; every op,
        wrappers flagged, is `summary()["ops"]`)."""
        return _table(self._t.op_columns(), as_frame)

    def slices(self, as_frame=None):
        """Every slice: ts_ns, dur_ns, name, category, kind, track, depth, correlation,
        and from its track rank, device (-1 on host), pid, tid (the stream on device tracks)."""
        return _table(self._t.slice_columns(), as_frame)

    def steps(self, as_frame=None):
        """Steps (ProfilerStep#N, SDK iterations): name, number, ts_ns, dur_ns, track, rank."""
        return _table(self._t.step_columns(), as_frame)

    def modules(self, as_frame=None):
        """The attribution tree (aiprof analyze --only attribution): one row per node
        (module, op, runtime call, device activity, other thread, untraced time) with
        path, name, kind, time_class, op_class, depth, parent (row index, -1 at the top),
        count_per_step, total_ns, self_ns (host wall time per steady step), device_ns
        and share (of the step's wall time). Filter kind == "module" for the module table."""
        return _table(self._t.module_columns(), as_frame)

    def samples(self, as_frame=None):
        """Host CPU stack samples (aiprof trace, Nsight Systems), one row per sample: ts_ns,
        weight_ns (the time it stands for), track, pid, tid, thread (the track's name), leaf
        (the function of the innermost frame), module (its binary, or the .py file of a Python
        frame), leaf_kind (native, python, kernel, unknown), python (a Python frame anywhere
        on the stack) and callstack: the frames root first joined by ";" (flame graphs'
        folded form; `.str.split(";")` gives the list). Samples without a stack have an empty
        leaf and callstack.
        `aiprof summary` counts the same samples (host_samples)."""
        return _table(self._t.sample_columns(), as_frame)

    def devices(self, as_frame=None):
        """Per (rank, device): busy_ns (the union of its kernels, copies, sets and collectives), span_ns
        (first to last device activity) and utilization = busy_ns / span_ns."""
        return _table(self._t.device_columns(), as_frame)

    def tracks(self, as_frame=None):
        """Tracks, indexed by the `track` column of the other tables."""
        return _table(self._t.track_columns(), as_frame)

    def counters(self, as_frame=None):
        """Counter samples: ts_ns, name (the counter track's), value, track, rank, device."""
        return _table(self._t.counter_columns(), as_frame)

    def flows(self, as_frame=None):
        """Flows between slices (row indices into `slices()`), with id and category."""
        return _table(self._t.flow_columns(), as_frame)

    def sql(self, query, max_rows=1000000, timeout=30.0, max_memory=1 << 30, as_frame=None):
        """Runs SQL over the trace's tables and views (`slices`, `tracks`, `args`, ...: aiprof.sql_schema(),
        docs/query.md) and returns the last statement's rows as a table. Read-only; raises aiprof.Error when the
        query fails, runs past `timeout` seconds, needs more than `max_memory` bytes, or matches
        more than `max_rows` rows (0 = no limit for each; timeout=float("inf") too), or its rows hold more
        than 1 GiB; ValueError for a negative or NaN limit. Ctrl-C cancels the query (KeyboardInterrupt)."""
        return _table(self._t.sql_columns(query, max_rows, timeout, max_memory), as_frame)

    def analyze(self, only=None, device=""):
        """Runs the analyses of `aiprof analyze` and returns its JSON as a dict:
        {"metrics": {name: {"value", "unit", "source", "measured"}},
         "unavailable": {name: reason}, "evidence": {...}, "sections": {...}}.
        `only`: an analysis name or a list of them (aiprof.analysis_names()); `device`: roofline peaks.
        Each metric's base (what a ratio is a share of) is in docs/metrics.md."""
        if isinstance(only, str):
            only = [only]
        return _json(self._t.analyze_json(list(only or []), device))

    def diagnose(self, target="latency", constraints="", rules=None, builtin_rules=True, device=""):
        """Findings (bottleneck, confidence, causes, impact) and the suggestions that fit
        `target` ("latency", "throughput", "memory") and `constraints`
        (e.g. "memory<3GB,precision_loss<1%" or a list of such terms), as the JSON of
        `aiprof suggest --format json`. `rules`: extra rule files or folders."""
        if not isinstance(constraints, str):
            constraints = ",".join(constraints)
        paths = [_path(p) for p in ([rules] if isinstance(rules, (str, bytes, os.PathLike)) else rules or [])]
        return _json(self._t.diagnose_json(target, constraints, paths, builtin_rules, device))


def load(path):
    """Imports `path`: Kineto/Chrome JSON (.gz, .zst), torch_npu or msprof folders,
    Nsight Systems SQLite, a folder of ranks, or a native .aiprof file; or a list of
    SDK files of one run (its processes' event and spill files), loaded as one trace,
    as `aiprof summary traces/aiprof-*` does.
    Raises aiprof.Error naming the file and the place on bad input."""
    if isinstance(path, (list, tuple)):
        if not path:
            raise ValueError("aiprof.load: no path in the list")
        return Trace(_aiprof.load_files([_path(p) for p in path]))
    return Trace(_aiprof.load(_path(path)))


def validate(before, after, metrics=None, test="auto", alpha=0.05, min_effect=0.02, unit="step",
             batch_size=0.0, bench="", sample_unit="ms", resamples=10000, seed=0x5EED, fix_id="",
             warmup_steps=-1, scenario="", statistic=""):
    """Decides with statistics whether `after` improved or regressed on `before`
    (each a loaded Trace, or a path to a trace or benchmark result file, or a list of
    them, one per run: with several runs a side the run is the unit, as with repeated
    `--before`/`--after`), as the JSON of `aiprof validate --format json`:
    {"overall": ..., "metrics": [{"metric", "verdict", ...}], "prediction": ...}; "prediction" is the
    before run's prediction of the fix the after run applied against what the after run measured
    (pooled over the runs with several a side); no "prediction" key when a first run is a result
    file, no fix was inferred (a note says why) or a run has no steady step.
    metrics: a name or a list, e.g. ["latency", "p99", "throughput"]; unit: "step" or a span name;
    fix_id: the suggestion id the after run applied (default: inferred from what changed);
    warmup_steps: traces with unit "step": leading warm-up steps left out of the samples (-1, the default,
    detects leading outliers; 0 keeps all), as `--warmup-steps`;
    scenario: the fix the after run applied, stated as a what-if scenario (docs/whatif.md) instead of
    fix_id, as `--scenario`: its prediction is replayed on the before trace (not corrected by past cases:
    the package reads no knowledge database); statistic: "median" or "mean" of the steady steps, as
    `--statistic` (default: the mean for an `every N` scenario, else the median)."""
    def native(x):
        if isinstance(x, (list, tuple)):
            return [native(y) for y in x]
        return x._t if isinstance(x, Trace) else _path(x)
    if isinstance(metrics, str):
        metrics = [metrics]
    return _json(_aiprof.validate_json(native(before), native(after), list(metrics or []), test, alpha,
                                       min_effect, unit, batch_size, bench, sample_unit, resamples, seed, fix_id,
                                       warmup_steps, scenario, statistic))


def sql_schema():
    """The tables and views `Trace.sql` reads, with their columns and units, as text
    (the same as `aiprof query IN --schema`)."""
    return _aiprof.query_schema()


def analysis_names():
    """Names `Trace.analyze(only=...)` accepts, in the order the analyses run."""
    return _aiprof.analysis_names()
