"""Benchmark program (hand-made): a small CNN's inference loop for a fixed
time on CPU PyTorch, model(x) per request, no optimizer and no DataLoader
(aiprof trace finds its steps from the outermost module call, #25); prints
the number of calls and the median time per call in the format of
bench/torch_train_loop.py. Used by bench/capture_torch_memory.py --program infer.

  capture_infer_loop.py SECONDS
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
    torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 10)).eval()
x = torch.randn(16, 3, 32, 32)
times = []
end = time.monotonic() + seconds
with torch.no_grad():
    while time.monotonic() < end:
        t0 = time.monotonic_ns()
        model(x).argmax(1)
        times.append(time.monotonic_ns() - t0)
times.sort()
print('steps %d median_step_ms %.3f mean_step_ms %.3f cpu_ms_per_step %.3f'
      % (len(times), times[len(times) // 2] / 1e6, sum(times) / len(times) / 1e6,
         time.process_time() * 1e3 / len(times)), flush=True)
