#!/usr/bin/python3
"""Records a real 3-rank CPU job (gloo) whose last rank stops in step 4.

Each rank runs 6 steps (ProfilerStep#N record_function spans: 20 matmul +
tanh, then dist.all_reduce of the gradient-sized sum) under torch.profiler
(CPU), with a 4 s process-group timeout. In step 4 the last rank does not
reach the all-reduce: MODE hang sleeps HANG_S seconds (default 60), MODE
exit calls os._exit(1). The ranks that reach it wait in gloo until the
timeout (or the peer's connection closes), catch the RuntimeError and
export their trace (legacy export_chrome_trace: ts relative to each rank's
profiler start).

  survivors_timed_out/  MODE hang, HANG_S=600, the sleeping rank 2 killed
                        (SIGKILL) once ranks 0 and 1 had timed out and
                        exported: rank 2 wrote no trace.
  late_past_timeout/    MODE hang, HANG_S=60: rank 2 reached the
                        all-reduce 60 s late, after ranks 0 and 1 had timed
                        out and left, and failed at once (connection closed).

Usage (Debian python3-torch 1.13, one process per rank):
  MASTER_PORT=29541 HANG_S=600 python3 gen_crash.py RANK 3 OUT_DIR hang
"""
import os, sys, time, datetime, torch, torch.distributed as dist
from torch.profiler import profile, ProfilerActivity, schedule
rank = int(sys.argv[1]); world = int(sys.argv[2]); out = sys.argv[3]; mode = sys.argv[4]
os.environ.setdefault("MASTER_ADDR", "127.0.0.1"); os.environ.setdefault("MASTER_PORT", "29533")
dist.init_process_group("gloo", rank=rank, world_size=world, timeout=datetime.timedelta(seconds=4))
torch.manual_seed(rank)
w = torch.randn(256, 256)
with profile(activities=[ProfilerActivity.CPU]) as prof:
    try:
        for step in range(6):
            with torch.profiler.record_function("ProfilerStep#%d" % step):
                x = torch.randn(64, 256)
                for _ in range(20): x = torch.tanh(x @ w)
                g = x.sum(0)
                if rank == world - 1 and step == 4:
                    if mode == "hang": time.sleep(float(os.environ.get("HANG_S","60")))
                    if mode == "exit": os._exit(1)
                dist.all_reduce(g)
    except RuntimeError as e:
        print("rank", rank, "error:", str(e)[:200], flush=True)
prof.export_chrome_trace(os.path.join(out, "rank%d.pt.trace.json" % rank))
print("rank", rank, "exported", flush=True)
