"""Helpers shared by the oracle scripts beside it (each stays an independent
computation from the trace JSON; only reading and the quantile are shared)."""
import gzip
import json
from decimal import Decimal


def q(v, p):
    """Linear-interpolation quantile p of v (numpy's default)."""
    v = sorted(v)
    if not v:
        return 0
    pos = p * (len(v) - 1)
    lo = int(pos)
    return float(v[-1]) if lo + 1 >= len(v) else v[lo] + (v[lo + 1] - v[lo]) * (pos - lo)


def load_events(path):
    """The trace's events, numbers as Decimal (exact µs)."""
    d = json.load((gzip.open if path.endswith('.gz') else open)(path), parse_float=Decimal)
    return d['traceEvents'] if isinstance(d, dict) else d
