#!/usr/bin/python3
"""A real pair for `aiprof diff`'s call-site keys (issue #23 item 4, docs/diff.md).

One small module whose forward copies two same-shape sources into two
buffers from two functions of its own code (two aten::copy_ with the same
"Input Dims" and "Input type", call sites "gen_callsite_pair.py(N): load_first"
and "...(M): load_second"):

    def load_first(self):  self.buf_a.copy_(self.src_a)
    def load_second(self): self.buf_b.copy_(self.src_b)

A copy from a transposed (non-contiguous) source walks memory across the
cache lines and is several times slower than a copy from a contiguous one;
the profiler records the same shape for both.  In run A the first source is
the transposed one; in run B the second is.  The cost moves from one function to
the other; the op's total barely moves.  Run B also calls the two functions
in the other order, so pairing the instances in order of first appearance
would pair the two slow copies (and call nothing changed).  Shapes alone
cannot tell the two copies apart (one shape row per run); the call site can.

Both runs: Debian's python3-torch (1.13, CPU, no libkineto), one thread,
torch.profiler with record_shapes and with_stack, schedule wait 1, warmup 2,
active 12, written in the Kineto Chrome-trace layout by the serialiser of
../shared/tools/gen_torch_traces.py (imported, not copied), gzipped:
callsite_a.pt.trace.json.gz and callsite_b.pt.trace.json.gz.

Run with Debian's interpreter from the repository (not from /tmp):

    /usr/bin/python3 test/data/diff/gen_callsite_pair.py --out test/data/diff
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_TOOLS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "..", "shared", "tools"))
N = 1024
WAIT, WARMUP, ACTIVE = 1, 2, 12


def make_module(first_transposed):
    import torch
    import torch.nn as nn

    class TwoCopies(nn.Module):
        def __init__(self):
            super().__init__()
            g = torch.Generator().manual_seed(0)
            base_a = torch.randn(N, N, generator=g)
            base_b = torch.randn(N, N, generator=g)
            # The transposed source is a view with swapped strides: same shape.
            self.src_a = base_a.t() if first_transposed else base_a
            self.src_b = base_b if first_transposed else base_b.t()
            self.buf_a = torch.empty(N, N)
            self.buf_b = torch.empty(N, N)

        # Two functions, not two lines of one: torch's Python tracer names a
        # frame by its function's first line ("file(line): name"), so two
        # calls from one function share their frame.
        def load_first(self):
            self.buf_a.copy_(self.src_a)

        def load_second(self):
            self.buf_b.copy_(self.src_b)

        def forward(self, x):
            if first_transposed:
                self.load_first()
                self.load_second()
            else:
                self.load_second()
                self.load_first()
            return x + self.buf_a[0, 0] + self.buf_b[0, 0]

    return TwoCopies()


def run(first_transposed, path, tools):
    sys.path.insert(0, tools)
    import gen_torch_traces as gtt  # the shared Kineto-layout serialiser
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.set_num_threads(1)
    m = make_module(first_transposed)
    x = torch.zeros(4)

    def on_ready(prof):
        records, info = gtt.collect_kineto_events(prof)
        gtt.write_kineto_json(records, info, path, {
            "trace_generator": "test/data/diff/gen_callsite_pair.py with gen_torch_traces.py's serialiser: "
                               "torch.profiler %s (Debian, Kineto not compiled in) results re-serialized in "
                               "torch-1.13/libkineto Chrome-trace layout" % torch.__version__,
            "trace_generator_args": "first source transposed" if first_transposed else "second source transposed",
        })

    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                 on_trace_ready=on_ready, record_shapes=True, with_stack=True) as prof:
        with torch.no_grad():
            for _ in range(WAIT + WARMUP + ACTIVE):
                m(x)
                prof.step()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--tools", default=DEFAULT_TOOLS, help="folder of gen_torch_traces.py")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    run(True, os.path.join(a.out, "callsite_a.pt.trace.json.gz"), a.tools)
    run(False, os.path.join(a.out, "callsite_b.pt.trace.json.gz"), a.tools)


if __name__ == "__main__":
    main()
