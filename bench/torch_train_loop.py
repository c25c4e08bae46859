"""Benchmark program (hand-made): a small CNN trained with SGD on random
32x32 images for a fixed time, on CPU PyTorch; prints the number of steps
and the median step time. Used by bench/capture_torch_memory.py.

  torch_train_loop.py SECONDS
"""
import sys
import time

import torch

seconds = float(sys.argv[1])
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 3, 32, 32)
y = torch.randint(0, 10, (16,))
times = []
end = time.monotonic() + seconds
while time.monotonic() < end:
    t0 = time.monotonic_ns()
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
    times.append(time.monotonic_ns() - t0)
times.sort()
# cpu_ms_per_step: this process's CPU time (all of it: the hook's work too) per
# step, less sensitive than wall time to a shared machine's load.
print('steps %d median_step_ms %.3f mean_step_ms %.3f cpu_ms_per_step %.3f'
      % (len(times), times[len(times) // 2] / 1e6, sum(times) / len(times) / 1e6,
         time.process_time() * 1e3 / len(times)), flush=True)
