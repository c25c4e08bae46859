#!/usr/bin/python3
"""Evidence for test/whatif/README.md: the cost of a minor page fault on this
machine and how often a fresh 2 MB torch allocation faults (glibc reuses
freed memory on some iterations only). Not a test; run by hand:
/usr/bin/python3 test/whatif/page_faults.py"""
import time, statistics, torch, resource
torch.set_num_threads(1)
n = 512 * 1024  # 2 MB of floats
first, again = [], []
for _ in range(30):
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    t0 = time.perf_counter(); x = torch.empty(n); x.fill_(1.0); t1 = time.perf_counter()
    f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    x.fill_(2.0); t2 = time.perf_counter()
    first.append(((t1 - t0) * 1e3, f1 - f0)); again.append((t2 - t1) * 1e3)
    del x
ms = [a for a, _ in first]; fl = [b for _, b in first]
print("fresh 2 MB alloc+fill: median %.3f ms, faults median %d; refill: median %.3f ms" % (statistics.median(ms), statistics.median(fl), statistics.median(again)))
per = [(a - statistics.median(again)) / b * 1e3 for a, b in first if b > 0]
print("us per fault (steps with faults): median %.1f, n=%d of 30" % (statistics.median(per) if per else float('nan'), len(per)))
