"""Test program (hand-made) for aiprof trace's torch layer on a training
loop: a small MLP trained with SGD on CPU PyTorch, one optimizer step per
iteration. Prints "step N <monotonic ns>" after each optimizer step on
stdout (the script's own clock, for the test to compare the steps with).

  torch_train.py STEPS [exit|stubborn]
    exit      leave through os._exit(0): no exit handlers run
    stubborn  catch KeyboardInterrupt and keep training (until SIGTERM)
"""
import os
import sys
import time

import torch

steps = int(sys.argv[1])
mode = sys.argv[2] if len(sys.argv) > 2 else ''
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(64, 256)
y = torch.randint(0, 10, (64,))
i = 0
while i < steps or mode == 'stubborn':
    try:
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        i += 1
        print('step %d %d' % (i, time.monotonic_ns()), flush=True)
    except KeyboardInterrupt:
        print('interrupted: carrying on', flush=True)
if mode == 'exit':
    os._exit(0)
