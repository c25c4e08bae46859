// LLM inference phases: prefill (context, extend) and decode (generation),
// from the serving framework's step annotations, else from the attention
// kernels' families.
//
// Annotations (user_annotation / gpu_user_annotation slices):
//   - SGLang: "step[EXTEND bs=15 toks=15360]", "step[DECODE bs=32 toks=32]"
//     (EXTEND/PREFILL → prefill, DECODE → decode, MIXED → mixed);
//   - vLLM: "execute_<tokens>_context_<n>(...)_generation_<m>(...)": n
//     prefill and m decode requests (both > 0 → mixed), <tokens> scheduled;
//   - any other annotation whose name says prefill/context_phase or
//     decode/decoding/generation_phase (TensorRT-LLM, MindIE record functions,
//     a user's record_function("decoding")); "decoder" is not "decode" (a
//     module's annotation, "## decoder ... ##").
// An annotation nested in another on the same rank is the same step (SGLang
// writes both forms): the outermost is kept; except that an annotation holding
// two or more step annotations directly is a loop over steps, not a step (a
// user's record_function("decode") around the token loop with
// record_function("decode_step") per token): its children are the steps.
// A step's device time: kernels, copies, sets and collectives whose
// launching call (graph launches included) starts inside the step's span on its rank, grouped as attention, gemm,
// communication, memory (copies, sets) and other by src/analysis/roofline/kernel_class.h; device idle = Σ (wall time −
// the time some of the step's device activity ran in it, streams overlapping counted once), split into the device
// holding launched work (held: from a launch call's end to its activity, when that started kMinLaunchHoldNs or more
// after it, the critical path's idle_other) and host time (the rest: host work, launches, waits). A step's wall time
// runs from its start to the end of its work (the later of its span's end and its device activity's last end: a decode
// step's tokens exist once its kernels, a graph's included, have run), less the time the device was still on the
// previous step's work (from that work's end when it ends after the step's start), so the steps' wall times do not
// overlap where the host runs ahead. Tokens per phase where the annotation gives them; per-token time = phase wall time
// / tokens. Attention kernels also name their family (reported beside, and alone when there are no annotations): names
// with prefill/extend/varlen → prefill; decode, paged_attention, splitkv/split_kv → decode (the time of those kernels
// only: the rest of a step cannot be told apart from them). The steps' top-level torch ops by kind of work (host_op_*):
// what a CPU-only run's steps spend their time on, with no device work to tell it. Linear in slices (after sorting the
// step spans), times the slices' nesting depth for the top-level ops.
#ifndef AIPROF_SRC_ANALYSIS_LLM_LLM_PHASES_H_
#define AIPROF_SRC_ANALYSIS_LLM_LLM_PHASES_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

enum class LlmPhase : uint8_t { kPrefill = 0, kDecode, kMixed };
inline constexpr size_t kLlmPhaseCount = 3;
const char* LlmPhaseName(LlmPhase p);

enum class LlmWork : uint8_t { kAttention = 0, kGemm, kCommunication, kMemory, kOther };
inline constexpr size_t kLlmWorkCount = 5;
const char* LlmWorkName(LlmWork w);

// What one step annotation says.
struct LlmStepLabel {
  LlmPhase phase = LlmPhase::kPrefill;
  std::optional<int64_t> tokens;    // tokens scheduled in the step
  std::optional<int64_t> requests;  // batch size (requests in the step)
};

// Reads a step annotation's name; nullopt when it is none of the forms above.
std::optional<LlmStepLabel> ParseLlmStepName(std::string_view name);

// One annotated step: its rank, span and what its name says.
struct LlmStep {
  int32_t rank;
  int64_t start, end;
  LlmStepLabel label;
};
// The annotated steps, sorted by (rank, start): nested annotations of one
// step once (the outermost), an annotation holding two or more of them a
// loop whose children are the steps (above). Also the analysis window's,
// which says when its warm-up holds a prefill.
std::vector<LlmStep> FindLlmSteps(const Trace& trace);

struct LlmPhaseTotals {
  uint64_t steps = 0;
  int64_t wall_ns = 0;                 // Σ step wall time (start, or the previous work end, to its work end)
  int64_t span_ns = 0;                 // Σ step span (the annotation)
  int64_t device_ns = 0;               // Σ device activity launched inside
  std::array<int64_t, kLlmWorkCount> work_ns{};  // device_ns by kind of work
  // The step's wall time its device activity did not cover (wall − busy
  // time, overlapping streams once), split as the critical path splits it:
  // host_ns the host's part (host work, launch calls, the wait for a launch),
  // device_held_ns the time the device held work already launched (from the
  // launch call's end to an activity that started kMinLaunchHoldNs or more
  // after it: the critical path's idle_other; a faster host would not
  // shorten it). Before, all of it was host (vLLM's decode replay: 8.40 ms
  // of 19.11 ms; now 7.85 ms of it held).
  int64_t host_ns = 0;
  int64_t device_held_ns = 0;
  // Top-level torch ops (cpu_op slices inside no other cpu_op) on the step's
  // rank that start inside its span: their time, and by kind of work from
  // their names (src/analysis/attribution/op_class.h: attention; gemm = GEMM
  // and convolution; memory = data movement; other). Where a CPU run's step
  // time goes; in a device run the host side of the step (launching ops).
  int64_t host_op_ns = 0;
  std::array<int64_t, kLlmWorkCount> host_op_work_ns{};
  int64_t tokens = 0;
  uint64_t steps_with_tokens = 0;
  int64_t requests = 0;
};

struct LlmPhasesResult {
  std::string source;  // "annotations", "attention kernels" or "" (none found)
  std::array<LlmPhaseTotals, kLlmPhaseCount> phases{};
  // Without annotations: attention kernel time by the family's phase.
  std::array<int64_t, kLlmPhaseCount> attention_family_ns{};
  std::array<uint64_t, kLlmPhaseCount> attention_family_kernels{};
};

// Phase of an attention kernel by its name, or nullopt.
std::optional<LlmPhase> AttentionKernelPhase(std::string_view name);

LlmPhasesResult ComputeLlmPhases(const Trace& trace);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_LLM_LLM_PHASES_H_
