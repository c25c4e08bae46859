#!/usr/bin/python3
"""fresh: new real torch.profiler traces (torch 1.13 CPU, Debian) in the Kineto
layout (via gen_torch_traces.py's writer) and torch's own export_chrome_trace.

usage: /usr/bin/python3 gen_fresh.py OUTDIR [variant ...]   (no variant: all of them)

Run it from a folder other than /tmp (a stray inspect.py there breaks
`import torch`). gen_torch_traces.py is the project's shared generator
(../shared/tools from the repository root; $GEN_TORCH_TRACES overrides).
"""
import importlib.util
import json
import os
import sys
import threading

GTT = os.environ.get("GEN_TORCH_TRACES") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "shared", "tools", "gen_torch_traces.py")
spec = importlib.util.spec_from_file_location("gtt", GTT)
gtt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gtt)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
from torch.profiler import ProfilerActivity, profile, record_function, schedule  # noqa: E402

OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)


def write(prof, name, flops_arg=False):
    prof.export_chrome_trace(os.path.join(OUT, name + ".legacy.json"))
    records, info = gtt.collect_kineto_events(prof, flops_arg=flops_arg)
    gtt.write_kineto_json(records, info, os.path.join(OUT, name + ".kineto.json"),
                          {"trace_generator": "fresh/gen_fresh.py via gen_torch_traces.py writer",
                           "variant": name})


def mlp():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    x = torch.randn(16, 64)
    y = torch.randint(0, 10, (16,))
    opt = torch.optim.SGD(m.parameters(), lr=1e-2)
    return m, x, y, opt


def train_step(m, x, y, opt):
    opt.zero_grad(set_to_none=True)
    with record_function("## forward ##"):
        loss = nn.functional.cross_entropy(m(x), y)
    with record_function("## backward ##"):
        loss.backward()
    with record_function("## optimizer ##"):
        opt.step()


def sched_run(name, steps=4, wait=1, warmup=1, active=2, body=None, flops_arg=False, **kw):
    m, x, y, opt = mlp()
    body = body or (lambda: train_step(m, x, y, opt))
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=wait, warmup=warmup, active=active, repeat=1),
                 on_trace_ready=lambda p: write(p, name, flops_arg), **kw) as prof:
        for _ in range(steps):
            body()
            prof.step()


def v_shapes_on():
    sched_run("shapes_on", record_shapes=True)


def v_shapes_off():
    sched_run("shapes_off", record_shapes=False)


def v_stack():
    sched_run("stack", with_stack=True, record_shapes=True)


def v_mem():
    sched_run("mem", profile_memory=True, record_shapes=True)


def v_flops():
    sched_run("flops", with_flops=True, record_shapes=True, flops_arg=True)


def v_threads2():
    torch.set_num_threads(2)
    torch.manual_seed(0)
    a = torch.randn(256, 256)

    def body():
        with record_function("## mm ##"):
            (a @ a).relu_().sum()
    sched_run("threads2", body=body, record_shapes=True)
    torch.set_num_threads(1)


@torch.jit.script
def fork_work(t: torch.Tensor) -> torch.Tensor:
    return torch.mm(t, t).sum()


@torch.jit.script
def fork_main(a: torch.Tensor) -> torch.Tensor:
    futs = [torch.jit.fork(fork_work, a + i) for i in range(3)]
    return torch.stack([torch.jit.wait(f) for f in futs]).sum()


def v_fork():
    torch.set_num_interop_threads(2) if False else None
    torch.manual_seed(0)
    a = torch.randn(128, 128)

    def body():
        with record_function("## fork ##"):
            fork_main(a)
    sched_run("fork", body=body)


class DS(torch.utils.data.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((64,), float(i)), i % 10


def v_loader():
    m, x, y, opt = mlp()
    dl = torch.utils.data.DataLoader(DS(), batch_size=16, num_workers=2)
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: write(p, "loader"), record_shapes=True) as prof:
        for xb, yb in dl:
            train_step(m, xb, yb, opt)
            prof.step()


class Scaled(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        with record_function("bwd_outer"):
            with record_function("bwd_inner"):
                r = g * 2
            r = r + 0
        return r


def v_bwd_rf():
    m, x, y, opt = mlp()

    def body():
        opt.zero_grad(set_to_none=True)
        with record_function("## forward ##"):
            loss = nn.functional.cross_entropy(Scaled.apply(m(x)), y)
        with record_function("## backward ##"):
            loss.backward()
        opt.step()
    sched_run("bwd_rf", body=body)


def v_tiny():
    a = torch.ones(4)

    def body():
        a.add_(1)
    sched_run("tiny", steps=12, wait=1, warmup=1, active=10, body=body)


def v_midepoch():
    # 3 epochs of 5 iterations; skip_first=7 starts the schedule inside epoch 2
    m, x, y, opt = mlp()
    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(skip_first=7, wait=0, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda p: write(p, "midepoch")) as prof:
        for ep in range(3):
            with record_function("epoch %d" % ep):
                for _ in range(5):
                    train_step(m, x, y, opt)
                    prof.step()


def v_nostep():
    m, x, y, opt = mlp()
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for _ in range(2):
            train_step(m, x, y, opt)
    write(prof, "nostep")


def v_exc():
    m, x, y, opt = mlp()
    state = {"i": 0}

    def body():
        state["i"] += 1
        try:
            with record_function("## forward ##"):
                out = m(x)
                if state["i"] == 3:
                    raise RuntimeError("boom")
                nn.functional.cross_entropy(out, y).backward()
        except RuntimeError:
            with record_function("## recover ##"):
                torch.zeros(3)
    sched_run("exc", steps=5, wait=1, warmup=0, active=4, body=body)




def plegacy_run(name, body, steps=4, **kw):
    from torch.autograd import profiler_legacy
    body()  # warm-up, unprofiled
    with profiler_legacy.profile(**kw) as lp:
        for i in range(steps):
            with record_function("## step %d ##" % (i + 1)):
                body()
    lp.export_chrome_trace(os.path.join(OUT, name + ".profiler_legacy.json"))


def v_pl_train():
    m, x, y, opt = mlp()
    plegacy_run("pl_train", lambda: train_step(m, x, y, opt), record_shapes=True, profile_memory=True)


def v_pl_bwd_rf_fork():
    m, x, y, opt = mlp()
    a = torch.randn(64, 64)

    def body():
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(Scaled.apply(m(x)), y)
        loss.backward()
        opt.step()
        fork_main(a)
    plegacy_run("pl_bwd_rf_fork", body, with_stack=True)


def v_pl_exc():
    m, x, y, opt = mlp()
    st = {"i": 0}

    def body():
        st["i"] += 1
        try:
            with record_function("## forward ##"):
                m(x)
                if st["i"] == 3:
                    raise ValueError("boom")
        except ValueError:
            pass
    plegacy_run("pl_exc", body, steps=5)


def v_pl_tiny():
    a = torch.ones(4)
    plegacy_run("pl_tiny", lambda: a.add_(1), steps=12)


def v_nostep_long():
    m, x, y, opt = mlp()

    def step():
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(m(x), y).backward()
        opt.step()
    step()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(6):
            step()
    write(prof, "nostep_long")


def v_nostep_loader():
    m, x, y, opt = mlp()
    dl = torch.utils.data.DataLoader(DS(), batch_size=8, num_workers=2)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for xb, yb in dl:
            train_step(m, xb, yb, opt)
    write(prof, "nostep_loader")


def v_annot_steps():
    m, x, y, opt = mlp()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for i in range(4):
            with record_function("step %d" % i):
                train_step(m, x, y, opt)
    write(prof, "annot_steps")


def v_names():
    # record_function names as users write them; torch 1.13's export_chrome_trace writes names raw
    a = torch.ones(4)
    names = ['plain', 'quote "q" inside', 'back\\slash C:\\data\\x', 'tab\tsep', 'unicodé ✓ 日本',
             'brace {x} [y]', 'comma, colon: done', 'say "hi', 'dir\\', 'C:\\new\\table']

    def body():
        for n in names:
            with record_function(n):
                a.add_(1)
    sched_run("names", body=body)


RAW_NAMES = ['plain', 'say "hi', 'quote "q" inside', 'dir\\', 'back\\slash C:\\data\\x', 'tab\tsep',
             'brace {x} [y]', 'unicod\u00e9 \u2713', 'ends with quote"', 'plain again']


def v_raw_names():
    """record_function names with characters JSON escapes; torch 1.13 writes them raw."""
    a = torch.ones(4)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for n in RAW_NAMES:
            with record_function(n):
                a.add_(1)
    prof.export_chrome_trace(os.path.join(OUT, "raw_names.legacy.json"))
    records, info = gtt.collect_kineto_events(prof)
    escaped = gtt._jstr
    gtt._jstr = lambda s: '"' + s + '"'  # libkineto 1.13 writes names raw (gtt escapes them)
    try:
        gtt.write_kineto_json(records, info, os.path.join(OUT, "raw_names.kineto_raw.json"),
                              {"trace_generator": "fresh/gen_fresh.py v_raw_names: gen_torch_traces.py writer "
                                                  "with names written raw, as libkineto 1.13 writes them"})
    finally:
        gtt._jstr = escaped


class ProfiledDS(torch.utils.data.Dataset):
    """Each DataLoader worker profiles its own __getitem__ calls and writes its trace."""
    per_worker = 16

    def __init__(self, out):
        self.out = out
        self.prof = None
        self.n = 0

    def __len__(self):
        return 32

    def __getitem__(self, i):
        if self.prof is None:
            self.prof = profile(activities=[ProfilerActivity.CPU], record_shapes=True)
            self.prof.__enter__()
        with record_function("## getitem ##"):
            x = torch.full((64,), float(i)).sin().cos()
        self.n += 1
        if self.n == self.per_worker:
            self.prof.__exit__(None, None, None)
            wid = torch.utils.data.get_worker_info().id
            write(self.prof, os.path.join("loader_pids", "worker%d" % wid))
        return x, i % 10


def v_loader_pids():
    os.makedirs(os.path.join(OUT, "loader_pids"), exist_ok=True)
    m, x, y, opt = mlp()
    dl = torch.utils.data.DataLoader(ProfiledDS(OUT), batch_size=8, num_workers=2)
    it = iter(dl)  # the workers fork before the main process's profiler starts
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for xb, yb in it:
            train_step(m, xb, yb, opt)
    write(prof, os.path.join("loader_pids", "main"))


def v_tb_handler():
    """tensorboard_trace_handler, as the torch docs show (gzip too): export_chrome_trace's layout here."""
    m, x, y, opt = mlp()
    for gz in (False, True):
        d = os.path.join(OUT, "tb_gz" if gz else "tb")
        with profile(activities=[ProfilerActivity.CPU],
                     schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                     on_trace_ready=torch.profiler.tensorboard_trace_handler(d, worker_name="rank0_worker", use_gzip=gz),
                     record_shapes=True) as prof:
            for _ in range(9):
                train_step(m, x, y, opt)
                prof.step()


def v_everything():
    """Every option on at once: shapes, memory, stacks, flops; a forked task and a DataLoader."""
    m, x, y, opt = mlp()
    a = torch.randn(64, 64)
    dl = torch.utils.data.DataLoader(DS(), batch_size=16, num_workers=2)
    it = iter(dl)

    def body():
        xb, yb = next(it)
        train_step(m, xb, yb, opt)
        with record_function("## fork ##"):
            fork_main(a)
    sched_run("everything", body=body, steps=4, wait=1, warmup=1, active=2, flops_arg=True,
              record_shapes=True, profile_memory=True, with_stack=True, with_flops=True)


def v_exc_out():
    """An exception leaves the training loop mid-step: the profiler stops inside that step."""
    m, x, y, opt = mlp()
    try:
        with profile(activities=[ProfilerActivity.CPU],
                     schedule=schedule(wait=1, warmup=1, active=4, repeat=1),
                     on_trace_ready=lambda p: write(p, "exc_out")) as prof:
            for i in range(8):
                opt.zero_grad(set_to_none=True)
                with record_function("## forward ##"):
                    loss = nn.functional.cross_entropy(m(x), y)
                    if i == 4:
                        raise KeyboardInterrupt("stop in the 3rd active step's forward")
                loss.backward()
                opt.step()
                prof.step()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    names = sys.argv[2:] or [k[2:] for k in list(globals()) if k.startswith("v_")]
    for n in names:
        globals()["v_" + n]()
        print("wrote", n, flush=True)
