"""Test program (hand-made) for aiprof's page-fault layer: a small MLP
trained with SGD on CPU PyTorch that, in step k, also fills a fresh buffer
of 4 MiB + 16 KiB x k and frees it. glibc's default allocator serves a
request above its mmap threshold with a fresh mmap and, when it is freed,
raises the threshold to that size (its dynamic threshold, at most 32 MiB):
each step's buffer, a little larger than the last, is mmapped afresh and
first-touched, about 1,030 minor faults a step. With GLIBC_TUNABLES
glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432
(fixed thresholds, the "steady" allocator of test/data/pairs) the buffers
come from the heap, which is never trimmed: a step faults only for the
16 KiB the heap grows by (4 pages), except that now and then (when the
torch profiler's records were allocated above the freed block) the heap
must grow by a whole buffer again: a step of ~1,100 faults in a few steps
of 30 under aiprof trace. Seven 256x256 matmuls into a preallocated output
make the rest of the step (compute that allocates nothing, about 40 ms
here), so that the faults left with fixed thresholds are a small share of
the step while the default allocator's are not.

An optional second argument sets the buffer's base size in MiB (default 4):
jemalloc with its default settings returns every freed block of 8 MiB or more
to the kernel (its oversize arena), so a 12 MiB buffer faults on every step
under it (about 3,070 faults), and not with decay off (dirty_decay_ms:-1).

Prints, per optimizer step, "step N <minflt delta> <begin ns> <end ns>":
the process's minor faults (getrusage(RUSAGE_SELF).ru_minflt) taken between
the end of the previous step's optimizer.step and the end of this one (the
window the capture hook's optimizer.step boundaries make a step),
independent of perf. CLOCK_MONOTONIC ns.

  page_fault_churn.py STEPS [BASE_MIB]
"""
import resource
import sys
import time

import torch

steps = int(sys.argv[1])
base_floats = (int(sys.argv[2]) if len(sys.argv) > 2 else 4) * 262144
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256)
y = torch.randint(0, 10, (64,))
# Work that allocates nothing (matmuls into a preallocated output), so that
# the step is mostly compute when no fault churns.
a, b, c = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)


def minflt():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


prev_f, prev_t = minflt(), time.monotonic_ns()
for i in range(1, steps + 1):
    opt.zero_grad()
    buf = torch.empty(base_floats + 4096 * i).fill_(1.0)  # BASE MiB + 16 KiB x i of floats, first-touched
    extra = buf[:1].sum() * 0
    loss = torch.nn.functional.cross_entropy(model(x), y) + extra
    loss.backward()
    del buf, extra
    for _ in range(7):
        torch.mm(a, b, out=c)
    opt.step()
    f, t = minflt(), time.monotonic_ns()
    print('step %d %d %d %d' % (i, f - prev_f, prev_t, t), flush=True)
    prev_f, prev_t = f, t
