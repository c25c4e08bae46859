#include "src/monitor/proc_stats.h"

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace aiprof {

namespace {

// The state letter of a /proc/.../stat file (0 when unreadable): the field
// after the command name, which may hold spaces and parentheses.
char StatState(const std::string& path) {
  std::string line;
  std::getline(std::ifstream(path), line);
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() ? line[close + 2] : 0;
}

bool StateIsDead(char state) { return state == 'Z' || state == 'X'; }

}  // namespace

bool IsZombieProcess(int pid) {
  const std::string dir = "/proc/" + std::to_string(pid);
  if (!StateIsDead(StatState(dir + "/stat"))) return false;
  // The leader is a zombie; any other thread alive (or the leader's entry
  // alive again: the exec finished meanwhile) means the process is. A thread
  // that left between the listing and its read reads 0.
  if (DIR* tasks = opendir((dir + "/task").c_str())) {
    bool alive = false;
    while (dirent* e = readdir(tasks)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      const char state = StatState(dir + "/task/" + e->d_name + "/stat");
      if (state != 0 && !StateIsDead(state)) {
        alive = true;
        break;
      }
    }
    closedir(tasks);
    if (alive) return false;
  }
  // The exec can end during the listing: the execing thread takes over the
  // pid, and its own tid then names the old leader, dead or gone. The leader
  // read again after the listing is the new one then (a tight poll of
  // trial_races D's process, a thread execing: 9 false exits in 100 runs
  // without this read, 0 in 300 with it). Gone (0) now: it exited and was
  // reaped.
  const char again = StatState(dir + "/stat");
  return again == 0 || StateIsDead(again);
}

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
