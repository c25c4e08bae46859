#include "src/base/phase_log.h"

#include <atomic>
#include <mutex>

namespace aiprof {
namespace {
std::mutex g_mu;
std::atomic<bool> g_enabled{false};
std::vector<std::pair<std::string, double>>& Log() {
  static auto* log = new std::vector<std::pair<std::string, double>>();
  return *log;
}
}  // namespace

void EnablePhaseLog(bool enabled) { g_enabled.store(enabled, std::memory_order_relaxed); }

void LogPhase(std::string name, double ms) {
  if (!g_enabled.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(g_mu);
  Log().emplace_back(std::move(name), ms);
}

std::vector<std::pair<std::string, double>> TakePhaseLog() {
  std::lock_guard<std::mutex> lock(g_mu);
  std::vector<std::pair<std::string, double>> out;
  out.swap(Log());
  return out;
}

}  // namespace aiprof
