"""aiprof: record traces from inside a Python service, and analyse any trace.

Two halves in one package:

* SDK (the C runtime of include/aiprof/aiprof.h, same clock, buffers and
  file as C/C++ code in the process): `span`, `iteration_start`,
  `iteration_end`, `step`, `node`, `request`, `counter`, `flush`, ...
  See aiprof.sdk.
* Analysis: `load(path)` returns a Trace with `summary()`, `ops()`,
  `slices()`, `steps()`, `devices()`, `analyze()`, `diagnose()`; and
  `validate(before, after)`. See aiprof.analysis.

The SDK runtime is loaded on the first use of an SDK name, not by
`import aiprof`: the runtime writes its file (AIPROF_OUTPUT, default
aiprof-<pid>.aiprof) at exit, which a program that only analyses traces
must not do. docs/python.md walks through both halves.
"""

import importlib.util as _importlib_util

from .analysis import Error, Trace, analysis_names, load, validate

__version__ = "0.1.0"

_SDK_NAMES = ("Request", "clock_ns", "counter", "enabled", "flush", "flush_to", "iteration_end",
              "iteration_start", "mark", "node", "output_path", "request", "set_enabled", "span", "step",
              "thread_name")

# True when the package was built with the SDK (the _sdk extension exists).
has_sdk = _importlib_util.find_spec(__name__ + "._sdk") is not None

__all__ = ["Error", "Trace", "analysis_names", "has_sdk", "load", "validate"]
if has_sdk:
    __all__ += list(_SDK_NAMES)


def __getattr__(name):
    if name in _SDK_NAMES:
        from . import sdk  # loads and starts the runtime
        value = getattr(sdk, name)
        globals()[name] = value  # later lookups skip this function
        return value
    raise AttributeError("module 'aiprof' has no attribute %r" % name)


def __dir__():
    return sorted(set(globals()) | set(__all__))
