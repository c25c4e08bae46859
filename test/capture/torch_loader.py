"""Test program (hand-made) for aiprof trace's steps from DataLoader
iteration (#25): a DataLoader over BATCHES batches in the main process, a
small model applied to each batch, no optimizer, EPOCHS epochs. Prints
"next <monotonic ns>" right before each next() on the iterator (the
script's own clock; the last of an epoch raises StopIteration) and "epoch
E" when one ends: its steps are the spans between consecutive next() calls
of an epoch, one per batch.

  torch_loader.py BATCHES EPOCHS
"""
import sys
import time

import torch
from torch.utils.data import DataLoader, TensorDataset

batches, epochs = int(sys.argv[1]), int(sys.argv[2])
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
data = TensorDataset(torch.randn(batches * 16, 64))
loader = DataLoader(data, batch_size=16)
with torch.no_grad():
    for e in range(epochs):
        it = iter(loader)
        while True:
            print('next %d' % time.monotonic_ns(), flush=True)
            try:
                (x,) = next(it)
            except StopIteration:
                break
            model(x)
            time.sleep(0.05)
        print('epoch %d' % e, flush=True)
        time.sleep(0.15)  # between epochs: not a step
