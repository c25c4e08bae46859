// Dtype round trips: a tensor cast to another dtype and straight back
// (x.double().float(), .float() then .half() at an autocast boundary), two
// full copies that change nothing the program keeps.
//
// A dtype conversion is the outermost op of a chain of cast ops
// (aten::to, aten::_to_copy, aten::type_as, aten::_autocast_to_reduced_precision,
// aten::_autocast_to_full_precision) around an aten::copy_ whose two tensors
// have the same shape and different dtypes ("Input type" / "Input Dims" of
// record_shapes; copy_'s first input is the destination, so the conversion
// is input 1's dtype -> input 0's). A copy_ that launches a device memcpy is
// a transfer (x.to("cuda", torch.half)), not a conversion; a copy_ with no
// cast op above it (out.copy_(x)) writes into a buffer the program keeps.
//
// A round trip is conversion A (X -> Y on shape S) followed, on the same host
// thread, by conversion B (Y -> X on shape S) where
//   - B is the next conversion on that thread after A;
//   - at most kCastRoundtripMaxOpsBetween outermost torch ops (cpu_op) run
//     between A's end and B's start;
//   - none of those ops takes a Y tensor of shape S as an input.
// Traces carry no tensor identities, so "the same tensor" is read from the
// structure: with nothing that could read the Y copy between the casts, B
// can only be casting A's result (or an identical one) back. A computation in
// Y between them (upcast, compute in double, downcast) reads a Y tensor of
// shape S and is the legitimate pattern, never a round trip. The allowance
// of a few ops is for bookkeeping the framework or user code puts between
// the casts (aten::detach, aten::empty, a view, an op on another tensor);
// a longer stretch is ordinary code whose dataflow the trace cannot show.
//
// Time of a round trip: on CPU-only traces the two ops' own spans; with
// device activity, the device time of the kernels launched inside the two
// ops (their copy kernels), as layout conversions count device time.
#ifndef AIPROF_SRC_ANALYSIS_CASTS_CAST_ROUNDTRIPS_H_
#define AIPROF_SRC_ANALYSIS_CASTS_CAST_ROUNDTRIPS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/model/trace.h"

namespace aiprof {

class MetricSet;
struct AnalysisWindow;

// Ops allowed between the two casts of a round trip (none of them reading the
// intermediate dtype): see the header comment.
inline constexpr int kCastRoundtripMaxOpsBetween = 2;
// Groups reported as evidence.
inline constexpr size_t kCastRoundtripTopReported = 5;

// One round trip: the two conversion ops and what its time is measured on.
struct CastRoundtrip {
  uint32_t there = kNoSlice, back = kNoSlice;  // the X -> Y and Y -> X ops
  size_t group = 0;                            // into CastRoundtripResult::groups
  int64_t time_ns = 0;                         // op spans, or launched kernel time
  std::vector<uint32_t> timed;                 // the two ops, or their kernels
};

// Round trips with the same dtypes, shape and trigger.
struct CastRoundtripGroup {
  std::string dtype;  // X: the tensor's dtype before and after
  std::string via;    // Y: the dtype it visits
  std::vector<int64_t> shape;
  std::string trigger;  // nearest enclosing non-cast slice of the first cast ("#N" -> "#*"), or ""
  uint64_t count = 0;   // over the whole trace
  int64_t total_ns = 0;
};

struct CastRoundtripResult {
  bool device = false;                     // timed on device kernels (else host ops)
  bool typed = false;                      // some torch op carries a readable "Input type"
  bool types_unread = false;  // else: one carries it in a form not read (neither Kineto's list nor torch_npu's text)
  bool torch_ops = false;     // the trace has cpu_op slices
  uint64_t conversions = 0;                // dtype conversions seen (round trip or not)
  std::vector<CastRoundtrip> trips;        // in trace order per thread
  std::vector<CastRoundtripGroup> groups;  // by total time, largest first
};

// Linear in slices (plus the walk up each cast's parents).
CastRoundtripResult ComputeCastRoundtrips(const Trace& trace);

// Publishes cast_roundtrip_ns (the trips' time inside the analysis window,
// per the window's base), cast_roundtrip_ratio (of the base),
// cast_roundtrip_count_per_step and "cast_roundtrip" evidence per group.
// Nothing on a trace without torch ops (nsys, SDK, runtime-only traces: the
// rule is only where computed); unavailable where no op's "Input type" can
// be read (record_shapes off).
void PublishCastRoundtrips(const Trace& trace, const CastRoundtripResult& result, const AnalysisWindow& window,
                           MetricSet* metrics);

}  // namespace aiprof

#endif  // AIPROF_SRC_ANALYSIS_CASTS_CAST_ROUNDTRIPS_H_
