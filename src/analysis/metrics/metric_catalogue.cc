// The catalogue of metrics (name, unit, meaning). Keep sorted by name.
// Analyses publish these into a MetricSet; diagnosis rules may only name
// metrics listed here. docs/metrics.md documents the same list.
#include "src/analysis/metrics/metric_set.h"

#include <algorithm>

namespace aiprof {

const std::vector<MetricInfo>& MetricCatalogue() {
  using U = MetricUnit;
  static const std::vector<MetricInfo> kCatalogue = [] {
    // One metric a line, to read as a table.
    // clang-format off
    std::vector<MetricInfo> v = {
        {"attribution_coverage", U::kRatio, "share of the steady step's wall time on the critical thread assigned to a node of the attribution tree (1 by construction)"},
        {"compute_attention_ratio", U::kRatio, "attention ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_compiled_ratio", U::kRatio, "share of the compute time (compute_op_ns's activity; CPU: op time) in torch.compile's code: under a compiled region, or Inductor's Triton kernels"},
        {"compute_conv_ratio", U::kRatio, "convolution ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_data_movement_ratio", U::kRatio, "data movement (copies, cat, index, ...) ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_elementwise_ratio", U::kRatio, "elementwise ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_gemm_ratio", U::kRatio, "GEMM (matmul, linear, ...) ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_low_precision_ratio", U::kRatio, "GEMM and convolution time in 16 bits or fewer (bf16, fp16, fp8, int8, fp4), share of their time whose data type is known (kernel names; else the ops' Input type)"},
        {"compute_norm_ratio", U::kRatio, "normalisation ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_reduction_ratio", U::kRatio, "reduction (sum, softmax, pooling, loss) ops, share of the compute time (compute_op_ns) by the attribution tree"},
        {"compute_op_ns", U::kNanoseconds, "impact: compute time per base by the attribution tree (host op time on CPU traces; on device traces the device activity launched in the step: kernels, copies and memsets; at most the step)"},
        {"compute_op_ratio", U::kRatio, "compute_op_ns over the step's wall time (the device's period where it runs behind; device traces without steps: the trace's steady-state time, the impact base)"},
        {"comm_exposed_ratio", U::kRatio, "communication time not hidden behind compute, share of the device span (per base: comm_exposed_ns)"},
        {"comm_failed_count", U::kCount, "collectives that did not complete: a rank never arrived (crashed, hung, killed) or arrived after the others gave up"},
        {"comm_overlap_ratio", U::kRatio, "share of communication time overlapped by compute"},
        {"comm_ratio", U::kRatio, "communication (collectives) time, share of device busy time"},
        {"comm_wait_ratio", U::kRatio, "time ranks wait in collectives for later ranks, share of collective time"},
        {"critical_path_collective_ns", U::kNanoseconds, "collective time on the critical path, per steady step"},
        {"critical_path_compute_ns", U::kNanoseconds, "kernel time on the critical path, per steady step"},
        {"critical_path_copy_hidden_ratio", U::kRatio, "share of the steps' device copy time that is off the critical path"},
        {"critical_path_copy_ns", U::kNanoseconds, "device copy time on the critical path, per steady step"},
        {"critical_path_host_ns", U::kNanoseconds, "host op, runtime and sync-call time on the critical path, per steady step"},
        {"critical_path_idle_ns", U::kNanoseconds, "idle and waiting time on the critical path, per steady step"},
        {"critical_path_ns", U::kNanoseconds, "critical-path length (step start to the end of its last launched work), per steady step"},
        {"compute_ratio", U::kRatio, "compute (kernel) time, share of the device span"},
        {"data_loading_ratio", U::kRatio,
         "idle time overlapped by data loading (the device's; on CPU-only traces the main thread's between its ops), "
         "share of the span"},
        {"device_idle_ratio", U::kRatio, "idle time between device activities, share of the device span"},
        {"device_util", U::kRatio, "device busy time / device span (CPU traces: main thread op time / span)"},
        {"fusion_candidate_ratio", U::kRatio, "time in the top fusion-candidate sequences, share of op time"},
        {"fusion_candidate_boundaries_per_step", U::kCount, "op boundaries (launches/dispatches) per step that fusing the top candidate removes"},
        {"fusion_candidate_occurrences_per_step", U::kCount, "occurrences per step of the top fusion candidate"},
        {"graph_gap_p50_ns", U::kNanoseconds, "median device gap between consecutive CUDA/HIP graph replays on a stream"},
        {"graph_kernel_ratio", U::kRatio, "share of kernels replayed by CUDA/HIP graph launches"},
        {"graph_launch_cost_ns", U::kNanoseconds, "median duration of a graph-launch call (cudaGraphLaunch, hipGraphLaunch)"},
        {"idle_host_bound_ratio", U::kRatio, "idle time whose launching call began after the device went idle, share of span"},
        {"idle_sync_ratio", U::kRatio, "idle time overlapped by a synchronization call, share of span"},
        {"launch_delay_p50_ns", U::kNanoseconds, "median device start minus launching runtime call end, over launch calls whose work started under 100 us after the call returned (later: the device held it, not launch latency)"},
        {"launches_per_step", U::kCount, "launch calls per step (a graph launch counts once)"},
        {"layout_conversion_count_per_step", U::kCount, "layout/format conversion ops per step"},
        {"layout_conversion_ratio", U::kRatio, "layout/format conversion time, share of device (or CPU op) time"},
        {"long_tail_time_ratio", U::kRatio, "time tail instances take beyond their op's median, share of op time"},
        {"long_tail_ratio", U::kRatio, "largest share of an op's total time spent in instances beyond 3x its median"},
        {"memcpy_ratio", U::kRatio, "memory copy time, share of device busy time"},
        {"memcpy_step_ratio", U::kRatio, "memory copy time inside steps, share of total step time"},
        {"memory_bandwidth_util", U::kRatio, "achieved bytes/s over the device peak, time-weighted over ops"},
        {"memory_bound_time_ratio", U::kRatio, "time in memory-bound ops, share of op time with a roofline"},
        {"memory_peak_allocated_bytes", U::kBytes, "peak allocated memory"},
        {"memory_peak_reserved_bytes", U::kBytes, "peak reserved memory"},
        {"memory_peak_util", U::kRatio, "peak reserved (or allocated) memory over device memory capacity"},
        {"op_coverage", U::kRatio, "share of device-activity time attributed to a host op (cpu_op)"},
        {"pageable_memcpy_count", U::kCount, "copies from or to pageable host memory"},
        {"pipeline_top_stage_share", U::kRatio, "latency share of the slowest pipeline stage"},
        {"request_itl_p99_ns", U::kNanoseconds, "99th percentile inter-token latency: gap between a request's token events over the tokens the later one brought (SDK token calls)"},
        {"request_tokens_per_s_p50", U::kPerSecond, "median over requests of output tokens / request latency (SDK token calls)"},
        {"request_tpot_p50_ns", U::kNanoseconds, "median time per output token after the first: (last token - first token) / (tokens - first event's tokens)"},
        {"request_tpot_p99_ns", U::kNanoseconds, "99th percentile time per output token after the first"},
        {"request_ttft_p50_ns", U::kNanoseconds, "median time to first token: first token event - request begin (SDK token calls)"},
        {"request_ttft_p99_ns", U::kNanoseconds, "99th percentile time to first token"},
        {"requests_with_tokens", U::kCount, "requests that recorded output tokens through the SDK"},
        {"short_kernel_ratio", U::kRatio, "share of kernels shorter than the launch cost"},
        {"slow_link_count", U::kCount, "links below 80% of the median bandwidth of their transport type"},
        {"slow_rank_excess_ratio", U::kRatio, "how much later the last-arriving rank reaches collectives than the median other rank, share of its device span"},
        {"slow_ranks", U::kCount, "ranks the outlier test (Dixon's Q for 3-10 ranks, 3 sigma above) flags as late to collectives"},
        {"small_op_ratio", U::kRatio, "share of op time in ops shorter than the small-op threshold"},
        {"step_time_cv", U::kRatio, "step time standard deviation / mean"},
        {"step_time_excess_ratio", U::kRatio, "(mean - median step time) / mean: share of the step lost to slow steps"},
        {"step_time_mean_ns", U::kNanoseconds, "mean step time, on the step time's base (step_time_device_period: 1 when it is the device's period because the device runs behind the host, 0 the host span)"},
        {"step_time_device_period", U::kCount, "1: step times are device periods (end of one step's device work to the next's; the device runs behind the host), 0: host spans"},
        {"step_time_host_mean_ns", U::kNanoseconds, "mean host span of the steps (ProfilerStep#N or annotation), whatever the step time's base"},
        {"step_time_device_period_mean_ns", U::kNanoseconds, "mean device period of the steps with one (end of the previous step's device work to the end of the step's own; a rank's first step has none)"},
        {"step_time_p99_ns", U::kNanoseconds, "99th percentile step time"},
        {"steps", U::kCount, "number of steps found"},
        // Impacts: wall-clock time per the base (impact_base_ns: per step, or per
        // trace without steps) over the steady-state window (src/analysis/window).
        {"comm_exposed_ns", U::kNanoseconds, "impact: communication not overlapped by compute, per base"},
        {"data_loading_wait_ns", U::kNanoseconds, "impact: device (or main-thread) idle time overlapped by data loading, per base"},
        {"fusion_saving_ns", U::kNanoseconds, "impact: gaps plus op time beyond the longest op in the top fusion candidates' occurrences, each op and gap counted once, per base"},
        {"host_region_ratio", U::kRatio, "host time with no op running of the largest region the program names (record_function, SDK span; not a DataLoader span, not an nn.Module frame) that is host work (no op for at least half its time), share of the mean steady step; CPU-only traces with ops recorded"},
        {"host_region_ns", U::kNanoseconds, "impact: host time with no op running of the largest program-named region (host_region_ratio's), per step"},
        {"idle_host_bound_ns", U::kNanoseconds, "impact: device idle time waiting for the host to launch, per base"},
        {"idle_other_ns", U::kNanoseconds, "device idle time with no known cause, per base"},
        {"idle_sync_ns", U::kNanoseconds, "impact: device idle time overlapped by a blocking synchronisation, per base"},
        {"impact_base_ns", U::kNanoseconds, "the base every impact is per: mean steady-state step, or steady-state time of the trace"},
        {"impact_device_periods", U::kCount, "device periods the base averages where it is the device's period (the device runs behind the host); absent on a host-span base"},
        {"impact_host_base_ns", U::kNanoseconds, "the steady steps' mean host span, beside a base on the device's period"},
        {"impact_steps", U::kCount, "steady-state steps the base averages, over all ranks (0: per trace)"},
        {"impact_ranks", U::kCount, "ranks whose steps the base averages (0: per trace)"},
        {"layout_conversion_ns", U::kNanoseconds, "impact: layout/format conversion time (union), per base"},
        {"cast_roundtrip_ns", U::kNanoseconds, "impact: time of dtype round trips (a cast and the cast straight back: op time on CPU, copy-kernel time on the device; union), per base"},
        {"cast_roundtrip_ratio", U::kRatio, "cast_roundtrip_ns, share of the base (the mean steady step)"},
        {"cast_roundtrip_count_per_step", U::kCount, "dtype round trips per base (steady steps)"},
        {"page_fault_ns", U::kNanoseconds, "impact: estimated time of minor page faults per base (faults of the steps' processes x the cost of one first-touch fault measured at capture start; aiprof trace)"},
        {"page_fault_ratio", U::kRatio, "page_fault_ns, share of the base (the mean steady step)"},
        {"malloc_glibc", U::kCount, "1 when the traced process used glibc's malloc, 0 when it had another mapped (jemalloc, tcmalloc, mimalloc; aiprof trace's capture.malloc)"},
        {"malloc_glibc_fixed", U::kCount, "1 when the traced process used glibc's malloc with its mmap and trim thresholds both fixed (GLIBC_TUNABLES or MALLOC_*_THRESHOLD_), else 0 (capture.malloc.settings)"},
        {"malloc_keeps_freed", U::kCount, "1 when the traced process's malloc, as configured, keeps freed memory mapped for reuse (jemalloc with dirty_decay_ms:-1, tcmalloc), else 0 (aiprof trace's capture.malloc and .settings)"},
        {"page_faults_per_step", U::kCount, "minor page faults of the steps' processes per base (aiprof trace's perf page-fault records)"},
        {"long_tail_excess_ns", U::kNanoseconds, "impact: top-level tail instances' time beyond their op's steady median, per base"},
        {"memcpy_exposed_ns", U::kNanoseconds, "impact: copy time not overlapped by compute or communication on its device, per base"},
        {"comm_failed_wait_ns", U::kNanoseconds, "impact: time ranks present sat in failed collectives (waiting for a rank that never came or came too late), per step"},
        {"slow_rank_excess_ns", U::kNanoseconds, "impact: how much later the slowest rank reaches collectives than the median rank, per its step"},
        {"startup_ns", U::kNanoseconds, "start-up calls (context creation, first allocations, module loading), union over the trace"},
        {"startup_ratio", U::kRatio, "start-up time, share of the trace span"},
        {"step_time_excess_ns", U::kNanoseconds, "impact: mean - median steady-state step time"},
        {"trace_span_ns", U::kNanoseconds, "first start to last end of the trace"},
        {"untraced_host_ns", U::kNanoseconds, "host time per step on the critical thread outside any recorded op, module or wait on any thread of the process (attribution tree)"},
        {"untraced_host_ratio", U::kRatio, "untraced_host_ns, share of the step's wall time"},
        {"warmup_steps", U::kCount, "leading warm-up steps left out of impacts"},
        {"warmup_prefill_steps", U::kCount,
         "of the warm-up steps, those holding an LLM prefill step annotation (set only when some do)"},
        {"compute_util", U::kRatio, "achieved FLOP/s over the device peak, time-weighted over ops"},
    };
    // clang-format on
    std::sort(v.begin(), v.end(), [](const MetricInfo& a, const MetricInfo& b) { return a.name < b.name; });
    return v;
  }();
  return kCatalogue;
}

}  // namespace aiprof
