// Import diagnostics: malformed records are counted by kind, with the first
// place each kind was seen, and import goes on (see docs/summary-schema.md).
#ifndef AIPROF_SRC_MODEL_DIAGNOSTICS_H_
#define AIPROF_SRC_MODEL_DIAGNOSTICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace aiprof {

struct DiagnosticEntry {
  uint64_t count = 0;
  std::string first_where;  // "file:byte 1234" or "file:line 17"
  std::string description;
};

// Kinds that note how records were read while every record and value was
// kept (a slice that partly overlaps another is kept, only not nested in
// it): listed by summary and report, not warned of by the commands that
// print only figures (src/cli/flags.h WarnImportDiagnostics).
bool IsNoteOnlyDiagnostic(std::string_view kind);
// Kinds that tell the user what to give aiprof for more (a graph capture
// beside a replay trace given alone: graph_capture_not_merged), no record
// left out: note-only, and printed as "aiprof: note: WHERE: DESCRIPTION"
// by WarnImportDiagnostics.
bool IsAdviceDiagnostic(std::string_view kind);

class Diagnostics {
 public:
  // Counts one occurrence of `kind`; `where` and `description` are kept for the first.
  void Add(const std::string& kind, const std::string& where, const std::string& description);
  const std::map<std::string, DiagnosticEntry>& entries() const { return entries_; }
  std::map<std::string, DiagnosticEntry>& mutable_entries() { return entries_; }
  uint64_t Total() const;
  // How many records of `kind` were counted; 0 when none.
  uint64_t Count(const std::string& kind) const;
  bool empty() const { return entries_.empty(); }

 private:
  std::map<std::string, DiagnosticEntry> entries_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_MODEL_DIAGNOSTICS_H_
