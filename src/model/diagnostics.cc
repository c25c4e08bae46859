#include "src/model/diagnostics.h"

namespace aiprof {

bool IsAdviceDiagnostic(std::string_view kind) { return kind == "graph_capture_not_merged"; }

bool IsNoteOnlyDiagnostic(std::string_view kind) {
  return kind == "slice_partial_overlap" || kind == "slice_end_rounded" || IsAdviceDiagnostic(kind);
}

void Diagnostics::Add(const std::string& kind, const std::string& where,
                      const std::string& description) {
  DiagnosticEntry& e = entries_[kind];
  if (e.count++ == 0) {
    e.first_where = where;
    e.description = description;
  }
}

uint64_t Diagnostics::Count(const std::string& kind) const {
  auto it = entries_.find(kind);
  return it == entries_.end() ? 0 : it->second.count;
}

uint64_t Diagnostics::Total() const {
  uint64_t total = 0;
  for (const auto& [kind, e] : entries_) total += e.count;
  return total;
}

}  // namespace aiprof
