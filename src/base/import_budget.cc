#include "src/base/import_budget.h"

#include <cstdio>

namespace aiprof {
namespace {
thread_local ImportBudget* current_budget = nullptr;
}  // namespace

Status ImportBudget::Exceeded(const std::string& path) const {
  const uint64_t b = bytes.load(std::memory_order_relaxed), e = events.load(std::memory_order_relaxed);
  if (max_bytes > 0 && b > max_bytes) {
    return ErrStatus(path + ": conversion stopped: more than " + std::to_string(max_bytes) +
                     " bytes of decompressed input (the server's limit, " + bytes_flag + ")");
  }
  if (max_events > 0 && e > max_events) {
    return ErrStatus(path + ": conversion stopped: more than " + std::to_string(max_events) +
                     " events (the server's limit, " + events_flag + ")");
  }
  if (std::chrono::steady_clock::now() > deadline) {
    char secs[32];
    std::snprintf(secs, sizeof secs, "%g", time_limit_s);
    return ErrStatus(path + ": conversion stopped: it ran longer than " + secs + " s (the server's limit, " +
                     time_flag + ")");
  }
  return OkStatus();
}

Status ChargeImportBytes(ImportBudget* budget, const std::string& path, uint64_t n) {
  if (budget == nullptr) return OkStatus();
  budget->bytes.fetch_add(n, std::memory_order_relaxed);
  return budget->Exceeded(path);
}

ImportBudget* CurrentImportBudget() { return current_budget; }

ScopedImportBudget::ScopedImportBudget(ImportBudget* budget) : previous_(current_budget) { current_budget = budget; }
ScopedImportBudget::~ScopedImportBudget() { current_budget = previous_; }

}  // namespace aiprof
