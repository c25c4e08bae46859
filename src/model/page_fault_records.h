// How minor page faults recorded by `aiprof trace` sit in the model, without
// a table of their own (docs/capture.md, "Page faults"): one instant per
// perf record on the faulting thread's host track (scope 't', category
// kPageFaultCategory, name kPageFaultName, no args), each standing for
// `capture.page_faults.period` faults; the machine's cost of one first-touch
// fault, measured at capture start, in the metadata. Capture writes them,
// src/analysis/page_faults/ reads them.
#ifndef AIPROF_SRC_MODEL_PAGE_FAULT_RECORDS_H_
#define AIPROF_SRC_MODEL_PAGE_FAULT_RECORDS_H_

namespace aiprof {

inline constexpr const char* kPageFaultCategory = "aiprof_page_fault";
inline constexpr const char* kPageFaultName = "minor page fault";

// Metadata keys.
inline constexpr const char* kPageFaultsMeta = "capture.page_faults";                 // on | off | blocked
inline constexpr const char* kPageFaultPeriodMeta = "capture.page_faults.period";     // faults per instant
inline constexpr const char* kPageFaultRecordsMeta = "capture.page_faults.records";   // instants written
inline constexpr const char* kPageFaultLostMeta = "capture.page_faults.lost_records"; // PERF_RECORD_LOST total
inline constexpr const char* kPageFaultKernelMeta = "capture.page_faults.kernel";     // recorded | excluded
inline constexpr const char* kPageFaultCostMeta = "capture.page_fault_cost_ns";       // median ns per fault
inline constexpr const char* kPageFaultCostMethodMeta = "capture.page_fault_cost_method";
inline constexpr const char* kPageFaultCostRunsMeta = "capture.page_fault_cost_runs_ns";  // each repetition
// The traced process's malloc (src/capture/allocator_probe.h): jemalloc |
// tcmalloc | mimalloc | glibc | unknown, the replacement library's path, and
// the allocator settings of its environment ("NAME=value; ...").
inline constexpr const char* kMallocMeta = "capture.malloc";
inline constexpr const char* kMallocLibraryMeta = "capture.malloc.library";
inline constexpr const char* kMallocSettingsMeta = "capture.malloc.settings";

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_PAGE_FAULT_RECORDS_H_
