"""Test program (hand-made) for aiprof trace --scope full_stack: a small MLP
on CPU PyTorch; with AIPROF_TEST_SDK_LIB set, each iteration is an SDK step
holding one application span "forward" around 2 forward passes (the SDK's
C API through ctypes). Each iteration also spends 40 ms of CPU time in
pure Python (own_work), so the script's own frames hold a share of the
samples that does not hang on the BLAS library's speed (OpenBLAS runs the
forward passes 10-30x faster than netlib's, under import torch's time)."""
import ctypes
import os
import time

import torch

lib = None
if os.environ.get('AIPROF_TEST_SDK_LIB'):
    lib = ctypes.CDLL(os.environ['AIPROF_TEST_SDK_LIB'])
    lib.aiprof_intern.restype = ctypes.c_void_p
    lib.aiprof_intern.argtypes = [ctypes.c_char_p]
    lib.aiprof_span_begin.argtypes = [ctypes.c_void_p]
    forward = lib.aiprof_intern(b'forward')


def own_work(seconds):
    end = time.process_time() + seconds
    x = 0
    while time.process_time() < end:
        x += 1
    return x


torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 64))
x = torch.randn(128, 512)
with torch.no_grad():
    for i in range(10):
        if lib:
            lib.aiprof_iteration_start()
            lib.aiprof_span_begin(forward)
        for _ in range(2):
            y = model(x)
        if lib:
            lib.aiprof_span_end()
        own_work(0.04)
        if lib:
            lib.aiprof_iteration_end()
print(float(y.sum()))
