#!/usr/bin/python3
"""A plain PyTorch CPU training loop under torch.profiler, without a schedule
and without prof.step(): the trace has no ProfilerStep#N and no step
annotations, as issue 25 describes ("a plain training loop gives Steps (0)").
The data set, the model and the optimizer are created inside the profiled
region (a warm-up prefix of ops before the loop). The script writes its own
step boundaries (time.time_ns() before each `next(loader)`, i.e. where
ProfilerStep#N would start) beside the trace, as ground truth for
test/e2e/periodic_steps_test.py.

  /usr/bin/python3 test/data/periodic/gen_plain_loop.py OUT.pt.trace.json OUT.meta.json [STEPS]
"""
import json
import sys
import time

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile
from torch.utils.data import DataLoader, TensorDataset


def main():
    out, meta_path = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    torch.manual_seed(0)
    torch.set_num_threads(1)
    starts, ends = [], []
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        data = TensorDataset(torch.randn(steps * 16, 3, 16, 16), torch.randint(0, 10, (steps * 16,)))
        loader = DataLoader(data, batch_size=16, shuffle=True, num_workers=0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                              nn.Flatten(), nn.Linear(16, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        loss_fn = nn.CrossEntropyLoss()
        it = iter(loader)
        for _ in range(steps):
            starts.append(time.time_ns())
            x, y = next(it)
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            opt.step()
            ends.append(time.time_ns())
    prof.export_chrome_trace(out)
    with open(meta_path, "w") as f:
        json.dump({"torch": torch.__version__, "steps": steps, "step_start_ns": starts, "step_end_ns": ends,
                   "clock": "time.time_ns() before next(loader) / after opt.step()"}, f, indent=1)


if __name__ == "__main__":
    main()
