// Hand-made traces shared by the what-if and prediction tests (labelled:
// written for them).
#ifndef AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_TEST_TRACES_H_
#define AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_TEST_TRACES_H_

#include <string>

namespace aiprof::testing {

// Kineto JSON (µs): four steps 100 µs apart, each aten::mm 10 µs; the steps
// numbered a multiple of `every` then run `checkpoint` for 10 µs (their step
// is 20 µs, the others 10). every = 1: a checkpoint on every step. The steps
// are numbered 1, 2, 3, 4, or with `stride` 2: 1, 3, 5, 7 (a profile that
// recorded every other step).
inline std::string CheckpointTrace(int every = 1, int stride = 1) {
  std::string events;
  for (int k = 1; k <= 4; ++k) {
    const int step = 1 + (k - 1) * stride;
    const int ts = (k - 1) * 100;
    const bool checkpoint = step % every == 0;
    const std::string at = R"(,"pid":1,"tid":1,"ts":)";
    events += std::string(events.empty() ? "" : ",") + R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
              std::to_string(step) + "\"" + at + std::to_string(ts) + R"(,"dur":)" + (checkpoint ? "20" : "10") +
              R"(},{"ph":"X","cat":"cpu_op","name":"aten::mm")" + at + std::to_string(ts) + R"(,"dur":10})";
    if (checkpoint) {
      events +=
          R"(,{"ph":"X","cat":"user_annotation","name":"checkpoint")" + at + std::to_string(ts + 10) + R"(,"dur":10})";
    }
  }
  return R"({"traceEvents":[)" + events + "]}";
}

}  // namespace aiprof::testing

#endif  // AIPROF_SRC_ANALYSIS_WHATIF_WHATIF_TEST_TRACES_H_
