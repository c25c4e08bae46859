#include "src/monitor/proc_stats.h"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace aiprof {

bool ParseStatCpuTicks(const std::string& line, uint64_t* ticks) {
  // The command name (field 2) is in parentheses and may hold spaces and
  // parentheses: fields are counted after the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(line.substr(close + 1));
  std::vector<std::string> fields;
  std::string f;
  while (in >> f) fields.push_back(f);
  // After ')': state is field 3, utime field 14, stime field 15.
  if (fields.size() < 13) return false;
  try {
    *ticks = std::stoull(fields[11]) + std::stoull(fields[12]);
  } catch (...) {
    return false;
  }
  return true;
}

double ParseStatusRssBytes(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::istringstream v(line.substr(6));
    double kb = 0;
    if (v >> kb) return kb * 1024;
  }
  return -1;
}

void ProcStats::Sample(int64_t now_ns, double* cpu_util, double* rss_bytes) {
  *cpu_util = -1;
  *rss_bytes = -1;
  const std::string dir = "/proc/" + std::to_string(pid_);
  std::string line;
  std::getline(std::ifstream(dir + "/stat"), line);
  uint64_t ticks = 0;
  if (ParseStatCpuTicks(line, &ticks)) {
    if (last_ns_ > 0 && now_ns > last_ns_ && ticks >= last_ticks_) {
      const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
      *cpu_util = (static_cast<double>(ticks - last_ticks_) / hz) / (static_cast<double>(now_ns - last_ns_) / 1e9);
    }
    last_ns_ = now_ns;
    last_ticks_ = ticks;
    have_ticks_ = true;
    ticks_per_s_ = static_cast<double>(sysconf(_SC_CLK_TCK));
  }
  std::ifstream status(dir + "/status");
  std::stringstream text;
  text << status.rdbuf();
  *rss_bytes = ParseStatusRssBytes(text.str());
}

}  // namespace aiprof
