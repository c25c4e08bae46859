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
must not do. It is also loaded as soon as an `aiprof monitor` creates
this process's live segment (/dev/shm/aiprof-live-<pid>), so that a
service is attachable from `import aiprof` on, before its first request:
until the runtime is loaded, a daemon thread looks for the segment four
times a second (AIPROF_LIVE=0 turns it off, as it turns off the runtime's
live thread). docs/python.md walks through both halves.
"""

import importlib.util as _importlib_util
import os as _os
import struct as _struct
import sys as _sys
import threading as _threading
import time as _time

from .analysis import Error, Trace, analysis_names, load, sql_schema, validate

__version__ = "0.1.0"

_SDK_NAMES = ("Request", "clock_ns", "counter", "enabled", "flush", "flush_to", "iteration_end",
              "iteration_start", "mark", "node", "output_path", "request", "set_enabled", "span", "step",
              "thread_name")

# True when the package was built with the SDK (the _sdk extension exists).
has_sdk = _importlib_util.find_spec(__name__ + "._sdk") is not None

__all__ = ["Error", "Trace", "analysis_names", "has_sdk", "load", "sql_schema", "validate"]
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


# --- Attachable from import (aiprof monitor; docs/monitor.md, "The live channel") ---

_LIVE_MAGIC = 0x4556494c46525041  # "APRFLIVE" (src/sdk/live_channel.h)
_LIVE_POLL_S = 0.25                # as the runtime's own live thread


def _monitor_waits_for_us():
    """True when a live monitor created this process's segment
    (header: magic u64, version, header_bytes, capacity, record_bytes u32,
    monitor_pid, target_pid i32)."""
    pid = _os.getpid()
    try:
        with open("/dev/shm/aiprof-live-%d" % pid, "rb") as f:
            head = f.read(32)
    except OSError:
        return False
    if len(head) < 32:
        return False
    magic, _, _, _, _, monitor_pid, target_pid = _struct.unpack("<QIIIIii", head)
    if magic != _LIVE_MAGIC or target_pid != pid or monitor_pid <= 0:
        return False  # not (yet) complete: the monitor writes the magic last
    try:
        _os.kill(monitor_pid, 0)
    except ProcessLookupError:
        return False  # left by a dead monitor
    except OSError:
        pass
    return True


def _load_sdk():
    try:
        from . import sdk  # noqa: F401  (the runtime's live thread attaches)
    except Exception:  # never raise into the service from here
        pass


def _watch_for_monitor():
    while "aiprof.sdk" not in _sys.modules:
        if _monitor_waits_for_us():
            _load_sdk()
            return
        _time.sleep(_LIVE_POLL_S)


def _start_live_watch():
    if not has_sdk or _os.environ.get("AIPROF_LIVE") == "0" or "aiprof.sdk" in _sys.modules:
        return
    if _monitor_waits_for_us():  # `monitor -- CMD`: the segment is there already
        _load_sdk()
        return
    _threading.Thread(target=_watch_for_monitor, name="aiprof-live-watch", daemon=True).start()


_start_live_watch()
if hasattr(_os, "register_at_fork"):
    # A forked child has a pid of its own and none of the parent's threads.
    _os.register_at_fork(after_in_child=_start_live_watch)
