"""Processes with roles for `aiprof trace` to name (#25): a torch DataLoader
with 2 workers (fork), then a multiprocessing Pool of 2 with the spawn start
method. Each busy-waits so that perf samples it. Prints "loader <pid>
<worker id>" per DataLoader worker, "pool <pid>" per Pool worker and "main
<pid>"; each __getitem__ (in a worker) prints "item <pid> <begin ns> <end
ns>" of its busy wait. Usage: roles.py"""
import multiprocessing
import os
import time

import torch
from torch.utils.data import DataLoader, Dataset


def busy(seconds):
    end = time.monotonic() + seconds
    x = 0
    while time.monotonic() < end:
        x += 1
    return x


class Data(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        t0 = time.monotonic_ns()
        busy(0.15)  # long enough for the worker's own sampler to take the GIL once on a loaded machine
        os.write(1, b'item %d %d %d\n' % (os.getpid(), t0, time.monotonic_ns()))  # one write: workers print at once
        return torch.tensor([os.getpid(), torch.utils.data.get_worker_info().id])


def task(i):
    busy(0.2)
    return os.getpid()


if __name__ == '__main__':
    seen = set()
    for batch in DataLoader(Data(), batch_size=2, num_workers=2):
        for pid, wid in batch.tolist():
            seen.add((pid, wid))
    for pid, wid in sorted(seen):
        print('loader %d %d' % (pid, wid))
    with multiprocessing.get_context('spawn').Pool(2) as pool:
        for pid in sorted(set(pool.map(task, range(4)))):
            print('pool %d' % pid)
    busy(0.2)
    print('main %d' % os.getpid(), flush=True)
