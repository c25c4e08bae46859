#include "src/analysis/results.h"

#include <mutex>
#include <unordered_map>
#include <utility>

#include "src/base/phase_log.h"
#include "src/model/trace.h"

namespace aiprof {

namespace {

struct Slot {
  std::once_flag once;
  std::unique_ptr<void, void (*)(void*)> value{nullptr, [](void*) {}};
};

}  // namespace

// The slots by spec address. The map is locked only to find or add a slot
// (a slot never moves); the result is computed under the slot's once_flag,
// so results that need others compute them without holding the map.
struct AnalysisResults::Slots {
  std::mutex mu;
  std::unordered_map<const void*, std::unique_ptr<Slot>> by_spec;
};

AnalysisResults::AnalysisResults(const Trace& trace, AnalyzeOptions options)
    : trace_(trace), options_(std::move(options)), slots_(std::make_unique<Slots>()) {
  trace_.strings.BuildIndex();  // the one lazily built part of a trace
}
AnalysisResults::~AnalysisResults() = default;

const void* AnalysisResults::Find(const void* spec, const char* phase, Maker make) {
  Slot* slot = nullptr;
  {
    std::lock_guard<std::mutex> lock(slots_->mu);
    std::unique_ptr<Slot>& s = slots_->by_spec[spec];
    if (!s) s = std::make_unique<Slot>();
    slot = s.get();
  }
  std::call_once(slot->once, [&] {
    ScopedPhase timed(options_.phase_prefix, (std::string("analysis.") + phase).c_str());
    slot->value = make(*this, spec);
  });
  return slot->value.get();
}

}  // namespace aiprof
