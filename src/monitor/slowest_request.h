// The slowest request of an incident's deep trace and the function that
// took its time (the incident section's first line, alert.json's
// deep_trace.slowest_request; docs/monitor.md, "On an alert").
#ifndef AIPROF_SRC_MONITOR_SLOWEST_REQUEST_H_
#define AIPROF_SRC_MONITOR_SLOWEST_REQUEST_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/analysis/host_functions/host_functions.h"
#include "src/model/trace.h"

namespace aiprof {

// The slowest request with host samples that began during the deep trace
// (the slowest of all when none has samples), and where its time
// went: the host samples taken on the thread(s) that served it while it ran
// (the threads its "request" flows touch), as the chain of functions on the
// stack in at least half of them, root first. The function that took the
// time (`path[named]`) is the innermost Python frame of the chain, else its
// innermost frame with a real symbol (not `lib!sym+0x…` or an address),
// else its last; the frames below it are its native tail: the interpreter's
// C-call machinery under a Python function that calls a builtin in a loop
// is on more than half the stacks by chance, and names nothing of the
// program.
struct SlowestRequest {
  bool found = false;
  std::string name, thread;
  int64_t ts_ns = 0, dur_ns = 0;
  uint64_t samples = 0;
  uint64_t python_samples = 0;                       // of them, with a Python frame (the capture's splice)
  std::vector<std::pair<std::string, double>> path;  // function, share of the samples
  size_t named = 0;  // the function that took the time; path[named + 1...]: its native tail
};

// The slowest request (a slice on a "requests…" spans track) that began in
// [from_ns, to_ns]. A request without flows counts every thread's samples
// but aiprof's own threads (named "aiprof-…"). Python frames (the capture's
// "function (file.py:line)") count as one function whatever their line and
// are named with the line seen most often; the path is ordered by each
// function's most frequent depth. Slowest first among the requests whose
// samples hold Python frames, when any does (a Python service: the frame
// sampler starts with the deep trace, a little after its window opens, and
// under load later still), else among those with samples.
SlowestRequest FindSlowestRequest(const Trace& t, int64_t from_ns, int64_t to_ns);

// The function that took the time ("" without samples).
std::string SlowestFunction(const SlowestRequest& r);

// One line: name, duration, thread, the function that took the time, the
// path down to it, and its native tail.
std::string DescribeSlowest(const SlowestRequest& r);

// The hottest host function of the service itself in `functions` (hottest
// first): aiprof's own (module aiprof_overhead: the Python frame sampler,
// the SDK's flush) left out, as the slowest request's path leaves out
// aiprof's threads; nullptr when none is left.
const HostFunction* HottestServiceFunction(const std::vector<HostFunction>& functions);

}  // namespace aiprof

#endif  // AIPROF_SRC_MONITOR_SLOWEST_REQUEST_H_
