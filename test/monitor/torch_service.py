#!/usr/bin/env python3
"""A PyTorch "service" for aiprof monitor's framework-layer test: each request
runs a small model under `with aiprof.request`; after SLOW_AFTER seconds it
also runs planted_slow_layer() (30 ms of large matrix products).

  torch_service.py PYTHON_PACKAGE_DIR SECONDS SLOW_AFTER
"""
import sys
import time

sys.path.insert(0, sys.argv[1])
import torch  # noqa: E402
import aiprof  # noqa: E402

torch.set_num_threads(1)
seconds, slow_after = float(sys.argv[2]), float(sys.argv[3])
x = torch.randn(64, 64)
w = torch.randn(64, 64)
big = torch.randn(384, 384)


def planted_slow_layer(t):
    # 30 ms of matrix products, timed: a fixed count took 70-140 ms with
    # netlib's BLAS but would take a few ms with OpenBLAS, under the
    # test's 8 ms alert.
    end = time.monotonic() + 0.03
    while True:
        t = torch.mm(big, big)
        if time.monotonic() >= end:
            return t


start = time.monotonic()
while time.monotonic() - start < seconds:
    with aiprof.request("infer"):
        y = torch.relu(torch.mm(x, w))
        if time.monotonic() - start > slow_after:
            planted_slow_layer(y)
    time.sleep(0.001)
