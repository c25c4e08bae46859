"""Test program (hand-made) for aiprof trace's steps without an optimizer
(#25): an inference loop, a small CNN called as model(x) CALLS times, no
optimizer, no DataLoader. Prints "call K <monotonic ns>" right after each
model(x) returns (the script's own clock): its steps are the CALLS - 1
spans between consecutive calls' ends. Between calls a softmax module
(no parameters) is applied to the output, which is not a step of its own.

  torch_infer.py CALLS [TRAIN_STEPS]

With TRAIN_STEPS, the model is then trained for that many SGD steps (each
a model(x) and an optimizer.step), printing "train K <monotonic ns>" after
each optimizer step: the hook's steps switch to optimizer.step.
"""
import sys
import time

import torch

calls = int(sys.argv[1])
train_steps = int(sys.argv[2]) if len(sys.argv) > 2 else 0
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
    torch.nn.Flatten(), torch.nn.Linear(16, 10)).eval()
softmax = torch.nn.Softmax(dim=1)
x = torch.randn(8, 3, 32, 32)
with torch.no_grad():
    for k in range(1, calls + 1):
        y = model(x)
        print('call %d %d' % (k, time.monotonic_ns()), flush=True)
        softmax(y)
        time.sleep(0.05)
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01) if train_steps else None
target = torch.randint(0, 10, (8,))
for k in range(1, train_steps + 1):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(model(x), target).backward()
    opt.step()
    print('train %d %d' % (k, time.monotonic_ns()), flush=True)
    time.sleep(0.05)
