#!/usr/bin/env python3
"""Independent figures for the Ascend memory and steps tests, straight from
the torch_npu CSV files with Python's csv and decimal modules (no aiprof code):

  memory_record.csv  PTA+GE Total Allocated(MB) peak (first row reaching the
                     maximum) and its time; PTA+GE Total Reserved(MB) peak;
                     MB x 1048576 = bytes, exact in Decimal.
  operator_memory.csv  the allocation at the peak time, else the last before;
                     row count, total Size(KB) x 1024 bytes.
  l2_cache.csv       rows and sum of Victim Rate.
  step_trace_time.csv  per step: Computing + Communication(Not Overlapped) +
                     Free in ns (exact), and Stage.

Usage: ascend_memory_steps_oracle.py <fixtures>/ascend-pt/level1/rank0_ascend_pt"""
import csv
import sys
from decimal import Decimal


def rows(path):
    with open(path, newline="") as f:
        return [{k: (v or "").strip() for k, v in r.items()} for r in csv.DictReader(f)]


def main(root):
    out = root + "/ASCEND_PROFILER_OUTPUT/"
    rec = rows(out + "memory_record.csv")
    alloc = [(Decimal(r["Total Allocated(MB)"]), Decimal(r["Timestamp(us)"]), i) for i, r in enumerate(rec)
             if r["Component"] == "PTA+GE" and r["Total Allocated(MB)"]]
    peak = max(alloc, key=lambda a: (a[0], -a[2]))
    reserved = max(Decimal(r["Total Reserved(MB)"]) for r in rec if r["Component"] == "PTA+GE" and r["Total Reserved(MB)"])
    print("peak_allocated_bytes", peak[0] * 1048576, "ts_ns", peak[1] * 1000)
    print("peak_reserved_bytes", reserved * 1048576)
    om = rows(out + "operator_memory.csv")
    before = [r for r in om if Decimal(r["Allocation Time(us)"]) <= peak[1]]
    last = max(before, key=lambda r: Decimal(r["Allocation Time(us)"]))
    print("allocation_at_peak", last["Name"], "size_bytes", Decimal(last["Size(KB)"]) * 1024, "ts_ns",
          Decimal(last["Allocation Time(us)"]) * 1000)
    print("operator_memory_rows", len(om), "total_size_bytes", sum(Decimal(r["Size(KB)"]) * 1024 for r in om),
          "with_release", sum(1 for r in om if r["Release Time(us)"]))
    l2 = rows(out + "l2_cache.csv")
    print("l2_rows", len(l2), "victim_rate_sum", sum(Decimal(r["Victim Rate"]) for r in l2 if r["Victim Rate"] != "N/A"))
    for r in rows(out + "step_trace_time.csv"):
        s = sum(Decimal(r[k]) for k in ("Computing", "Communication(Not Overlapped)", "Free"))
        print("step", r["Step"], "dur_ns", s * 1000, "stage_ns", Decimal(r["Stage"]) * 1000)


if __name__ == "__main__":
    main(sys.argv[1])
