"""aiprof: record traces from inside a Python service, and analyse any trace.

Two halves in one module:

* SDK (the C runtime of include/aiprof/aiprof.h, same clock and file):
  `span`, `iteration_start`, `iteration_end`, `step`, `node`, `request`,
  `counter`, `flush`. See aiprof.sdk.
* Analysis: `load(path)` returns a Trace with `summary()`, `ops()`,
  `slices()`, `steps()`, `devices()`, `analyze()`, `diagnose()`; and
  `validate(before, after)`. See aiprof.analysis.

docs/python.md walks through both.
"""

from . import _aiprof
from .analysis import Error, Trace, analysis_names, load, validate

__all__ = ["Error", "Trace", "analysis_names", "load", "validate"]

if _aiprof.has_sdk:
    from .sdk import (Request, clock_ns, counter, enabled, flush, flush_to, iteration_end, iteration_start, mark,
                      node, output_path, request, set_enabled, span, step, thread_name)
    __all__ += ["Request", "clock_ns", "counter", "enabled", "flush", "flush_to", "iteration_end",
                "iteration_start", "mark", "node", "output_path", "request", "set_enabled", "span", "step", "thread_name"]

__version__ = "0.1.0"
