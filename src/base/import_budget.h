// A budget for imports done on behalf of someone else (`aiprof serve`
// converting an upload): how many decompressed bytes may be read, how many
// events built, and until when. The front end sets it for the imports it
// starts on a thread (ScopedImportBudget); ByteSource::Open and the
// TraceBuilder pick it up there, count into it while the input streams, and
// the next read past a limit fails with Exceeded()'s message, so an import
// stops within one buffer of the limit instead of after the whole input.
// Inputs not read through ByteSource count their bytes with
// ChargeImportBytes: an Nsight SQLite file by its size, before it is
// opened (SQLite reads pages, not a stream); a compressed one's decompressed
// copy counts as it is written and gives its bytes back once complete
// (decompressed_copy.h). The Ascend CSVs and JSON members read through
// ByteSource.
// Without a budget (the CLI's own commands) nothing is counted or limited.
#ifndef AIPROF_SRC_BASE_IMPORT_BUDGET_H_
#define AIPROF_SRC_BASE_IMPORT_BUDGET_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "src/base/status.h"

namespace aiprof {

struct ImportBudget {
  uint64_t max_bytes = 0;   // decompressed bytes read; 0: no limit
  uint64_t max_events = 0;  // slices, begins, instants and counter values built; 0: no limit
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // How each limit is set, for the messages ("--max-convert-mb").
  std::string bytes_flag, events_flag, time_flag;
  double time_limit_s = 0;  // for the message

  std::atomic<uint64_t> bytes{0}, events{0};

  // An error naming `path` and the limit passed, or ok.
  Status Exceeded(const std::string& path) const;
};

// Counts `n` bytes of `path` into `budget` (nullptr: nothing is counted) and
// returns Exceeded(path): an error once a limit is passed.
Status ChargeImportBytes(ImportBudget* budget, const std::string& path, uint64_t n);

// The budget of imports started on this thread (nullptr: none).
ImportBudget* CurrentImportBudget();

// Sets the budget of this thread for its lifetime (nullptr clears it).
class ScopedImportBudget {
 public:
  explicit ScopedImportBudget(ImportBudget* budget);
  ~ScopedImportBudget();
  ScopedImportBudget(const ScopedImportBudget&) = delete;
  ScopedImportBudget& operator=(const ScopedImportBudget&) = delete;

 private:
  ImportBudget* previous_;
};

}  // namespace aiprof

#endif  // AIPROF_SRC_BASE_IMPORT_BUDGET_H_
