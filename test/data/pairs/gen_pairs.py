#!/usr/bin/python3
"""Real before/after pairs on CPU for the what-if accuracy test (issue #23 item 5).

Each pair is one small PyTorch program on this machine with Debian's
python3-torch (1.13, CPU only, no libkineto): BEFORE has one planted
performance problem, AFTER is the same program with the practitioner's fix
and nothing else changed (same model, data, seeds, batch).  Both run in one
process (a fresh interpreter per pair) under one torch.profiler session with
a schedule (wait 2, warmup 4, active 24), alternating a BEFORE step and an
AFTER step, so both see the same load on this shared machine; the session's
records are split by the ProfilerStep span containing them into
<pair>_before.pt.trace.json.gz and <pair>_after.pt.trace.json.gz (12 steps
each, numbered every other, an idle gap between steps), written in the
Kineto Chrome-trace layout by the serialiser of
../shared/tools/gen_torch_traces.py (imported, not copied), gzipped.  The
script also times the body of every profiled step with time.perf_counter (an
independent check of aiprof's step time) and writes those figures to
runs.json beside the traces.

Run with Debian's interpreter, from the repository (never from /tmp: a stray
inspect.py there shadows the stdlib and breaks `import torch`):

    chrt -f 10 /usr/bin/python3 test/data/pairs/gen_pairs.py --out test/data/pairs
    /usr/bin/python3 test/data/pairs/gen_pairs.py --out DIR --pairs layout_roundtrip

The shipped traces were recorded as root with `chrt -f 10` (SCHED_FIFO) in
front: this machine's 2 cores are shared with other jobs' builds; the
priority keeps their interference down, it does not change what the
programs do.  Not run by CI: CI reads the shipped traces only.
"""

import argparse
import datetime
import io
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
DEFAULT_TOOLS = os.path.abspath(os.path.join(REPO, "..", "shared", "tools"))

WAIT, WARMUP, ACTIVE = 1, 2, 12
# --protocol separate: each variant in its own process, 30 profiled steps
# (so a fix "every 10th step" acts on exactly 3 of them).
ACTIVE_SEPARATE = 30
PROTOCOLS = ("interleaved", "separate")

# --allocator steady: glibc malloc with fixed thresholds, so freed memory is
# neither trimmed back to the kernel nor mmap'd afresh each step (the
# threshold glibc otherwise adapts at run time).  With the default allocator a
# small CPU program on this VM takes hundreds of first-touch page faults per
# step (20-45 us each here), and which op takes them depends on the heap's
# layout, which no trace shows (test/whatif/README.md).  What jemalloc or
# tcmalloc, which PyTorch's CPU tuning guidance recommends, also avoid.
# --allocator jemalloc: Debian's libjemalloc2 preloaded (LD_PRELOAD, its
# default options, MALLOC_CONF unset).  Why (session 14, before the
# jemalloc_rounds set was recorded): under torch.profiler the steady glibc
# heap still grows by brk in the AFTER runs of zero_grad_set_to_none,
# checkpoint_every_step and log_every_step (strace: 16 MB per step in the
# faulting set_to_none runs), because the profiler's event records split the
# chunks a fixed program frees and allocates again each step; each growth is
# first-touch faults.  Unprofiled, the same AFTER program took 0 faults per
# step in 6 of 6 runs.  jemalloc keeps large extents apart from small slabs.
# --allocator jemalloc_retain: jemalloc with decay off, exactly the `changes`
# of rule page_fault_churn's suggestion jemalloc_retain (rules/page_faults.yaml):
# the setting aiprof tells a user to apply.  Why (session 15, protocol in
# README.md before recording): bench/allocator_faults.py measured, after the
# jemalloc set was recorded, that jemalloc's defaults return every freed
# block of 8 MiB or more to the kernel (thousands of faults a step); with
# decay off the pair programs took 0 faults a step unprofiled.
JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
JEMALLOC_RETAIN_CONF = ("oversize_threshold:1,background_thread:true,metadata_thp:auto,"
                        "dirty_decay_ms:-1,muzzy_decay_ms:-1")
ALLOCATORS = {
    "default": {},
    "steady": {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1073741824:glibc.malloc.mmap_threshold=33554432"},
    "jemalloc": {"LD_PRELOAD": JEMALLOC},
    "jemalloc_retain": {"LD_PRELOAD": JEMALLOC, "MALLOC_CONF": JEMALLOC_RETAIN_CONF},
}


def _mapped_allocator():
    """The malloc library this process has mapped (jemalloc or tcmalloc when
    preloaded; glibc otherwise): runs.json records what was really used."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if "jemalloc" in line or "tcmalloc" in line:
                    return line.split()[-1]
    except OSError:
        pass
    return "glibc"


# ----------------------------------------------------------------------------
# the pairs: each make_* returns (mode, step) for a variant; step(i) runs
# global step i.  The planted problem is behind `before`, its fix behind not.
# ----------------------------------------------------------------------------

def _mlp(dims):
    import torch.nn as nn
    mods = []
    for i in range(len(dims) - 1):
        mods.append(nn.Linear(dims[i], dims[i + 1]))
        if i < len(dims) - 2:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods)


def _trunk(chans, stride2=()):
    """3x3 conv + ReLU blocks (oneDNN convolutions: this torch's BLAS is the
    slow generic one, so the compute of most pairs is convolutions)."""
    import torch.nn as nn
    return [nn.Sequential(nn.Conv2d(cin, cout, 3, stride=2 if i in stride2 else 1, padding=1), nn.ReLU())
            for i, (cin, cout) in enumerate(zip(chans[:-1], chans[1:]))]


def _train_step(model, opt, loss_fn, x, y, set_to_none=True):
    opt.zero_grad(set_to_none=set_to_none)
    out = model(x)
    loss = loss_fn(out, y)
    loss.backward()
    opt.step()
    return out, loss


def make_dataloader_workers(before):
    """DataLoader(num_workers=0) with a slow per-sample transform: loading runs
    on the training thread between steps.  Fix: num_workers=2."""
    import torch
    import torch.nn as nn

    class SlowImages(torch.utils.data.Dataset):
        def __len__(self):
            return 16 * (WAIT + WARMUP + ACTIVE + 4)

        def __getitem__(self, i):
            time.sleep(0.001)  # stands for reading and decoding one file
            g = torch.Generator().manual_seed(i)
            img = torch.rand(3, 40, 40, generator=g)[:, 4:36, 4:36]
            if i % 2:
                img = img.flip(2)
            return (img - 0.5) / 0.25, i % 10

    model = nn.Sequential(*_trunk([3, 16, 16, 32], stride2=(1,)),
                          nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(32 * 16, 10))
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(SlowImages(), batch_size=16, shuffle=False,
                                         num_workers=0 if before else 2)
    it = iter(loader)  # workers start here, before profiling

    def step(i):
        x, y = next(it)
        _train_step(model, opt, loss_fn, x, y)
    return "train", step


def make_layout_roundtrip(before):
    """Each conv block permutes its activation to NHWC, makes it contiguous
    (for a helper that wanted channels-last) and permutes it back, contiguous
    again: two full copies per block that change nothing.  Fix: drop them."""
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList(_trunk([3, 16, 16, 16, 16]))
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
                if before:
                    x = x.permute(0, 2, 3, 1).contiguous()
                    x = x.permute(0, 3, 1, 2).contiguous()
            return self.head(x.mean((2, 3)))

    model = Net().eval()
    x = torch.randn(8, 3, 48, 48)

    def step(i):
        with torch.no_grad():
            model(x)
    return "infer", step


def make_log_every_step(before):
    """Every step copies the batch's feature maps to Python (tensor.tolist())
    and reads the loss and accuracy (.item()) for a log, inside a
    record_function("log_metrics") region.  Fix: log every 10th step."""
    import torch
    import torch.nn as nn
    from torch.profiler import record_function

    trunk = nn.Sequential(*_trunk([3, 16, 16, 16]))
    head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    opt = torch.optim.SGD(list(trunk.parameters()) + list(head.parameters()), lr=1e-3, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(8, 3, 32, 32)
    y = torch.randint(0, 10, (8,), generator=torch.Generator().manual_seed(1))
    history = []

    def step(i):
        opt.zero_grad(set_to_none=True)
        feats = trunk(x)
        out = head(feats)
        loss = loss_fn(out, y)
        loss.backward()
        opt.step()
        if before or i % 10 == 0:
            with record_function("log_metrics"):
                history.append((feats.detach().tolist(), loss.item(),
                                (out.argmax(1) == y).float().mean().item()))
                del history[:-2]
    return "train", step


def make_defensive_clone(before):
    """Each conv block clones its input twice "to be safe" (before the
    residual and before the convolution).  Fix: no clones."""
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(16, 16, 3, padding=1)

        def forward(self, x):
            res = x.clone() if before else x
            h = self.conv(x.clone() if before else x)
            return res + torch.relu(h)

    model = nn.Sequential(*[Block() for _ in range(4)]).eval()
    x = torch.randn(8, 16, 48, 48)

    def step(i):
        with torch.no_grad():
            model(x)
    return "infer", step


def make_cast_roundtrip(before):
    """Each conv block casts its input to float64 and straight back to float32
    (a numpy-era helper's leftover).  Fix: no casts."""
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(32, 32, 3, padding=1)

        def forward(self, x):
            if before:
                x = x.to(torch.float64).to(torch.float32)
            return x + torch.relu(self.conv(x))

    model = nn.Sequential(*[Block() for _ in range(4)]).eval()
    x = torch.randn(8, 32, 32, 32)

    def step(i):
        with torch.no_grad():
            model(x)
    return "infer", step


def make_zero_grad_set_to_none(before):
    """A recommender-style model (embedding table of 262144 x 16, dense
    gradients, plain SGD) with optimizer.zero_grad(set_to_none=False): every
    step writes zeros into the table's gradient and backward then adds into it
    (AccumulateGrad's add_).  Fix: set_to_none=True (backward hands its
    gradient over: no zeroing, no add)."""
    import torch
    import torch.nn as nn

    model = nn.Sequential(nn.EmbeddingBag(262144, 16, mode="mean"), nn.Linear(16, 10))
    opt = torch.optim.SGD(model.parameters(), lr=1e-2)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 262144, (64, 20), generator=g)
    y = torch.randint(0, 10, (64,), generator=g)

    def step(i):
        _train_step(model, opt, loss_fn, x, y, set_to_none=not before)
    return "train", step


def make_rebuild_mask(before):
    """A causal attention layer with an ALiBi-style position bias rebuilds the
    bias (arange, sub, abs, to, logspace, mul, neg_) and its causal mask (ones,
    triu, masked_fill) on every forward, although they depend only on the
    sequence length.  Fix: build them once and reuse them."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    L, d, nh = 256, 64, 4

    def build_bias():
        pos = torch.arange(L)
        rel = (pos.view(1, L) - pos.view(L, 1)).abs().float()
        slopes = torch.logspace(-1, -8, nh, base=2).view(nh, 1, 1)
        bias = torch.mul(rel, slopes).neg_()
        return bias.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), float("-inf"))

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.out = nn.Linear(d, d)

        def forward(self, x, bias):
            b = x.shape[0]
            q, k, v = self.qkv(x).view(b, L, 3, nh, d // nh).permute(2, 0, 3, 1, 4)
            att = F.softmax(q @ k.transpose(-1, -2) / math.sqrt(d // nh) + bias, -1)
            return x + self.out((att @ v).transpose(1, 2).reshape(b, L, d))

    layer = Attn().eval()
    x = torch.randn(1, L, d)
    cached = None if before else build_bias()

    def step(i):
        with torch.no_grad():
            layer(x, build_bias() if before else cached)
    return "infer", step


def make_per_sample_postprocess(before):
    """Post-processing of a classifier's logits one sample at a time in a
    Python loop (softmax and top-5 per row), inside
    record_function("postprocess").  Fix: one batched softmax and topk."""
    import torch
    import torch.nn as nn
    from torch.profiler import record_function

    model = nn.Sequential(*_trunk([3, 16, 32], stride2=(1,)), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(32, 1000)).eval()
    x = torch.randn(128, 3, 16, 16)

    def step(i):
        with torch.no_grad():
            logits = model(x)
            with record_function("postprocess"):
                if before:
                    res = [torch.softmax(logits[j], 0).topk(5) for j in range(logits.shape[0])]
                else:
                    res = torch.softmax(logits, 1).topk(5, dim=1)
        return res
    return "infer", step


def make_checkpoint_every_step(before):
    """A checkpoint (model and optimizer state_dict through torch.save, into an
    in-memory buffer standing for a local file) after every step, inside
    record_function("checkpoint").  Fix: every 10th step."""
    import torch
    import torch.nn as nn
    from torch.profiler import record_function

    model = _mlp([512, 1024, 1024, 10])
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    x = torch.randn(2, 512)
    y = torch.randint(0, 10, (2,), generator=torch.Generator().manual_seed(1))

    def step(i):
        _train_step(model, opt, loss_fn, x, y)
        if before or i % 10 == 0:
            with record_function("checkpoint"):
                buf = io.BytesIO()
                torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    return "train", step


def make_unfused_gelu(before):
    """1x1 convolutions (oneDNN) with GELU written out by hand between them
    (0.5 * h * (1 + erf(h / sqrt 2)): five elementwise ops over a 2 MB
    activation).  Fix: the library's fused F.gelu (one op).  Added in
    session 10; the GEMM-based first version was dropped after its
    exploratory BEFORE run (the generic BLAS's 100 ms linears left the
    activation under 1% of the step: a pair that measures nothing)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(32, 32, 1)

        def forward(self, x):
            h = self.conv(x)
            h = 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0))) if before else F.gelu(h)
            return x + h

    model = nn.Sequential(*[Block() for _ in range(3)]).eval()
    x = torch.randn(4, 32, 64, 64)

    def step(i):
        with torch.no_grad():
            model(x)
    return "infer", step


def make_unfused_layernorm(before):
    """Residual blocks normalised by a layer norm written out by hand (mean,
    centre, variance, divide by the root, affine: ten small ops over 2048 x
    512 tokens).  Fix: F.layer_norm (one op).  Added in session 10 (the
    first version's 95 ms linears were dropped after its exploratory run,
    as in unfused_gelu)."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(512))
            self.b = nn.Parameter(torch.zeros(512))

        def norm(self, x):
            if not before:
                return F.layer_norm(x, (512,), self.w, self.b, 1e-5)
            mu = x.mean(-1, keepdim=True)
            var = ((x - mu) ** 2).mean(-1, keepdim=True)
            return (x - mu) / torch.sqrt(var + 1e-5) * self.w + self.b

        def forward(self, x):
            return x + torch.tanh(self.norm(x))

    model = nn.Sequential(*[Block() for _ in range(3)]).eval()
    x = torch.randn(2048, 512)

    def step(i):
        with torch.no_grad():
            model(x)
    return "infer", step

PAIRS = {
    "dataloader_workers": make_dataloader_workers,
    "layout_roundtrip": make_layout_roundtrip,
    "log_every_step": make_log_every_step,
    "defensive_clone": make_defensive_clone,
    "cast_roundtrip": make_cast_roundtrip,
    "zero_grad_set_to_none": make_zero_grad_set_to_none,
    "rebuild_mask": make_rebuild_mask,
    "per_sample_postprocess": make_per_sample_postprocess,
    "checkpoint_every_step": make_checkpoint_every_step,
    "unfused_gelu": make_unfused_gelu,
    "unfused_layernorm": make_unfused_layernorm,
}


# ----------------------------------------------------------------------------
# one pair (in a subprocess): BEFORE and AFTER interleaved step by step
# ----------------------------------------------------------------------------

def _split(records):
    """Records of one profiling session -> {0: before's, 1: after's}: every
    record goes with the ProfilerStep span that contains its start; the
    session's first active step (its earliest ProfilerStep span) is BEFORE's,
    then they alternate."""
    import bisect
    steps = sorted((r[4], r[4] + r[5]) for r in records
                   if r[0] == "X" and r[2].startswith("ProfilerStep#"))
    starts = [s[0] for s in steps]
    out = {0: [], 1: []}
    for r in records:
        k = bisect.bisect_right(starts, r[4]) - 1
        if k < 0 or r[4] > steps[k][1]:
            continue  # outside every step (none in practice: the spans tile the window)
        out[k % 2].append(r)
    return out


def explore_before(pair, out_dir, tools):
    """BEFORE alone (no AFTER program is built or run): the exploratory run
    whose op names the pair's scenario is written from, before any AFTER
    trace exists.  Written to <out>/<pair>_explore_before.pt.trace.json.gz."""
    sys.path.insert(0, tools)
    import gen_torch_traces as gtt
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.set_num_threads(1)
    torch.manual_seed(0)
    _, step = PAIRS[pair](True)
    path = os.path.join(out_dir, "%s_explore_before.pt.trace.json.gz" % pair)

    def on_ready(prof):
        records, info = gtt.collect_kineto_events(prof)
        gtt.write_kineto_json(records, info, path, {
            "trace_generator": "test/data/pairs/gen_pairs.py --explore (BEFORE only, torch %s)" % torch.__version__,
            "trace_generator_args": "%s before (exploratory)" % pair})

    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=WAIT, warmup=WARMUP, active=4, repeat=1),
                 on_trace_ready=on_ready, record_shapes=True) as prof:
        for i in range(WAIT + WARMUP + 4):
            step(i)
            prof.step()
    return path


def _run_figures(path, events, mode, torch, times, faults):
    """One run's figures for runs.json: its trace file, the perf_counter time
    of each profiled step's body (ms) and its summary, the minor page faults
    of each step, the allocator setting and the load."""
    return {
        "file": os.path.basename(path),
        "bytes": os.path.getsize(path),
        "events": events,
        "mode": mode,
        "torch": torch.__version__,
        "torch_threads": torch.get_num_threads(),
        "perf_counter_step_ms": [round(x, 3) for x in times],
        "perf_counter_mean_ms": round(statistics.fmean(times), 3),
        "perf_counter_median_ms": round(statistics.median(times), 3),
        "perf_counter_cv": round(statistics.stdev(times) / statistics.fmean(times), 3),
        "minor_faults_per_step": faults,
        "minor_faults_median": statistics.median(faults),
        "glibc_tunables": os.environ.get("GLIBC_TUNABLES", ""),
        "malloc": _mapped_allocator(),
        "recorded_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "loadavg_1min": round(os.getloadavg()[0], 2),
    }


def run_pair(pair, out_dir, tools):
    sys.path.insert(0, tools)
    import gen_torch_traces as gtt  # the shared Kineto-layout serialiser
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.set_num_threads(1)
    torch.manual_seed(0)
    mode, step_before = PAIRS[pair](True)
    torch.manual_seed(0)  # same weights for the fixed program
    _, step_after = PAIRS[pair](False)
    paths = [os.path.join(out_dir, "%s_%s.pt.trace.json.gz" % (pair, v)) for v in ("before", "after")]
    counts = {}
    first = 2 * (WAIT + WARMUP)

    def on_ready(prof):
        records, info = gtt.collect_kineto_events(prof)
        for v, recs in _split(records).items():
            meta = {
                "trace_generator": "test/data/pairs/gen_pairs.py with gen_torch_traces.py's serialiser: "
                                   "torch.profiler %s (Debian, Kineto not compiled in) results "
                                   "re-serialized in torch-1.13/libkineto Chrome-trace layout; the "
                                   "%s steps of a session that alternated BEFORE and AFTER steps"
                                   % (torch.__version__, ("even", "odd")[v]),
                "trace_generator_args": "%s %s" % (pair, ("before", "after")[v]),
            }
            vinfo = dict(info, t1=max([r[4] + r[5] for r in recs] + [info["t0"]]))
            gtt.write_kineto_json(recs, vinfo, paths[v], meta)
            counts[v] = len(recs)

    times = {0: [], 1: []}
    faults = {0: [], 1: []}
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=2 * WAIT, warmup=2 * WARMUP, active=2 * ACTIVE, repeat=1),
                 on_trace_ready=on_ready, record_shapes=True) as prof:
        for k in range(2 * (WAIT + WARMUP + ACTIVE)):
            v, i = k % 2, k // 2
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.perf_counter()
            (step_before if v == 0 else step_after)(i)
            t1 = time.perf_counter()
            f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            if k >= first:
                times[v].append((t1 - t0) * 1e3)
                faults[v].append(f1 - f0)
            prof.step()
    out = {}
    for v, name in ((0, "before"), (1, "after")):
        t = times[v]
        out[name] = _run_figures(paths[v], counts.get(v), mode, torch, times[v], faults[v])
    return out


def run_variant(pair, variant, out_path, tools):
    """--protocol separate: one variant alone in this process (the same program,
    seeds and schedule as the interleaved protocol, 30 profiled steps), its
    trace written to out_path.  Returns the run's figures for runs.json."""
    global ACTIVE
    ACTIVE = ACTIVE_SEPARATE  # before the program is made: the loader's length depends on it
    sys.path.insert(0, tools)
    import gen_torch_traces as gtt
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.set_num_threads(1)
    torch.manual_seed(0)
    mode, step = PAIRS[pair](variant == "before")
    counts = {}

    def on_ready(prof):
        records, info = gtt.collect_kineto_events(prof)
        gtt.write_kineto_json(records, info, out_path, {
            "trace_generator": "test/data/pairs/gen_pairs.py --protocol separate with gen_torch_traces.py's "
                               "serialiser: torch.profiler %s (Debian, Kineto not compiled in) results "
                               "re-serialized in torch-1.13/libkineto Chrome-trace layout; this variant "
                               "alone in its process" % torch.__version__,
            "trace_generator_args": "%s %s" % (pair, variant)})
        counts["events"] = len(records)

    times, faults = [], []
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1),
                 on_trace_ready=on_ready, record_shapes=True) as prof:
        for i in range(WAIT + WARMUP + ACTIVE):
            f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            t0 = time.perf_counter()
            step(i)
            t1 = time.perf_counter()
            f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            if i >= WAIT + WARMUP:
                times.append((t1 - t0) * 1e3)
                faults.append(f1 - f0)
            prof.step()
    return _run_figures(out_path, counts.get("events"), mode, torch, times, faults)


def _separate(pair, a, env):
    """BEFORE, AFTER, BEFORE, AFTER, ... (--rounds rounds), each a fresh
    process.  Round 1's traces are the shipped files; every round's figures
    go to runs.json (the later rounds' traces are written and deleted: the
    same profiling cost, a check of how far runs of one variant differ)."""
    out = {}
    for r in range(1, a.rounds + 1):
        for v in ("before", "after"):
            name = "%s_%s.pt.trace.json.gz" % (pair, v)
            if a.keep_rounds:
                os.makedirs(os.path.join(a.out, "r%d" % r), exist_ok=True)
                path = os.path.join(a.out, "r%d" % r, name)
            else:
                path = os.path.join(a.out, name) if r == 1 else os.path.join(a.out, ".round%d_%s" % (r, name))
            res = subprocess.run([sys.executable, os.path.abspath(__file__), "--out", a.out, "--tools", a.tools,
                                  "--one-variant", pair, v, path], capture_output=True, text=True, cwd=REPO, env=env)
            if res.returncode != 0:
                sys.stderr.write(res.stderr)
                raise SystemExit("gen_pairs.py: %s %s (round %d) failed" % (pair, v, r))
            fig = json.loads(res.stdout.strip().splitlines()[-1])
            if r == 1:
                out[v] = dict(fig, rounds=[])
            elif not a.keep_rounds:
                os.unlink(path)
            keys = ("perf_counter_mean_ms", "perf_counter_median_ms", "perf_counter_cv", "minor_faults_median",
                    "loadavg_1min", "recorded_utc")
            if a.keep_rounds:
                keys += ("file", "bytes", "perf_counter_step_ms", "minor_faults_per_step")
            out[v]["rounds"].append({k: fig[k] for k in keys})
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=HERE, help="folder for the traces and runs.json")
    ap.add_argument("--pairs", default=",".join(PAIRS), help="comma list of: " + ", ".join(PAIRS))
    ap.add_argument("--tools", default=DEFAULT_TOOLS, help="folder of gen_torch_traces.py")
    ap.add_argument("--one", metavar="PAIR", help=argparse.SUPPRESS)
    ap.add_argument("--allocator", choices=sorted(ALLOCATORS), default="default",
                    help="glibc malloc as it comes (default), with fixed trim and mmap thresholds "
                         "(steady: GLIBC_TUNABLES=%s), jemalloc preloaded (jemalloc: LD_PRELOAD=%s), or "
                         "jemalloc with decay off (jemalloc_retain: also MALLOC_CONF=%s) "
                         "for every pair's process" % (ALLOCATORS["steady"]["GLIBC_TUNABLES"], JEMALLOC,
                                                       JEMALLOC_RETAIN_CONF))
    ap.add_argument("--protocol", choices=PROTOCOLS, default="interleaved",
                    help="interleaved: BEFORE and AFTER steps alternate in one process (12 profiled "
                         "steps each); separate: each variant alone in its own process (30 profiled "
                         "steps), BEFORE and AFTER runs alternating for --rounds rounds")
    ap.add_argument("--rounds", type=int, default=2,
                    help="--protocol separate: BEFORE/AFTER run pairs per pair (round 1's traces are kept)")
    ap.add_argument("--keep-rounds", action="store_true",
                    help="--protocol separate: keep every round's traces, in rN/ under --out (round 1 too)")
    ap.add_argument("--one-variant", nargs=3, metavar=("PAIR", "VARIANT", "PATH"), help=argparse.SUPPRESS)
    ap.add_argument("--explore", metavar="PAIR",
                    help="run only PAIR's BEFORE program (4 profiled steps) into --out, to write its "
                         "scenario from before any AFTER run exists")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    if a.explore:
        print(explore_before(a.explore, a.out, a.tools))
        return 0
    if a.one:
        print(json.dumps(run_pair(a.one, a.out, a.tools)))
        return 0
    if a.one_variant:
        print(json.dumps(run_variant(a.one_variant[0], a.one_variant[1], a.one_variant[2], a.tools)))
        return 0
    if os.path.abspath(os.getcwd()).startswith("/tmp"):
        raise SystemExit("gen_pairs.py: do not run from /tmp (a stray inspect.py there breaks import torch)")
    names = [p for p in a.pairs.split(",") if p]
    for p in names:
        if p not in PAIRS:
            raise SystemExit("gen_pairs.py: unknown pair %r (known: %s)" % (p, ", ".join(PAIRS)))
    manifest_path = os.path.join(a.out, "runs.json")
    runs = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            runs = json.load(f).get("runs", {})
    env = dict(os.environ)
    env.pop("GLIBC_TUNABLES", None)
    env.pop("LD_PRELOAD", None)
    env.pop("MALLOC_CONF", None)
    env.update(ALLOCATORS[a.allocator])
    if a.allocator.startswith("jemalloc") and not os.path.exists(JEMALLOC):
        raise SystemExit("gen_pairs.py: --allocator %s needs %s (apt-get install libjemalloc2)" % (a.allocator, JEMALLOC))
    for p in names:
        if a.protocol == "separate":
            runs[p] = _separate(p, a, env)
        else:
            r = subprocess.run([sys.executable, os.path.abspath(__file__), "--out", a.out,
                                "--tools", a.tools, "--one", p], capture_output=True, text=True, cwd=REPO, env=env)
            if r.returncode != 0:
                sys.stderr.write(r.stderr)
                raise SystemExit("gen_pairs.py: %s failed" % p)
            runs[p] = json.loads(r.stdout.strip().splitlines()[-1])
        for v in ("before", "after"):
            x = runs[p][v]
            print("%-24s %-6s %8.2f ms/step (perf_counter mean, median %.2f, CV %.2f) %6d faults/step %7d bytes  load %.2f"
                  % (p, v, x["perf_counter_mean_ms"], x["perf_counter_median_ms"], x["perf_counter_cv"],
                     x["minor_faults_median"], x["bytes"], x["loadavg_1min"]), flush=True)
    doc = {
        "generator": "test/data/pairs/gen_pairs.py --allocator %s --protocol %s%s (run with /usr/bin/python3)"
                     % (a.allocator, a.protocol, " --rounds %d%s" % (a.rounds, " --keep-rounds" if a.keep_rounds else "")
                        if a.protocol == "separate" else ""),
        "keep_rounds": bool(a.keep_rounds),
        "protocol": a.protocol,
        "allocator": dict({"name": a.allocator, "GLIBC_TUNABLES": ""}, **ALLOCATORS[a.allocator]),
        "machine": {"cpu_count": os.cpu_count(), "machine": platform.machine(),
                    "python": sys.version.split()[0]},
        "schedule": ({"wait": WAIT, "warmup": WARMUP, "active": ACTIVE,
                      "note": "per variant; the session alternates BEFORE and AFTER steps"}
                     if a.protocol == "interleaved" else
                     {"wait": WAIT, "warmup": WARMUP, "active": ACTIVE_SEPARATE, "rounds": a.rounds,
                      "note": "each variant alone in its own process; BEFORE and AFTER runs alternate, "
                              "round 1's traces shipped"}),
        "perf_counter": "wall time of each profiled step's body (the step function, "
                        "prof.step() excluded), milliseconds",
        "runs": {k: runs[k] for k in sorted(runs)},
    }
    with open(manifest_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
