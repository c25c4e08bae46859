#include "src/capture/process_names.h"

#include <dirent.h>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace aiprof {
namespace {

// "rank R world_size W" (R, W non-negative decimal); anything else leaves `p` as it is.
void ParseRankLine(const std::string& line, ProcessRole* p) {
  std::istringstream in(line);
  std::string k1, k2;
  long long rank = -1, world = -1;
  if (!(in >> k1 >> rank >> k2 >> world) || k1 != "rank" || k2 != "world_size") return;
  if (rank < 0 || rank > INT32_MAX || world < 0) return;
  p->rank = static_cast<int32_t>(rank);
  p->world_size = world;
}

}  // namespace

std::map<int64_t, ProcessRole> ReadProcessRoles(const std::string& dir) {
  std::map<int64_t, ProcessRole> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".txt") != 0) continue;
    char* end = nullptr;
    const long long pid = std::strtoll(name.c_str(), &end, 10);
    if (pid <= 0 || end != name.c_str() + name.size() - 4) continue;
    std::ifstream in(dir + "/" + name);
    ProcessRole p;
    if (!std::getline(in, p.role) || !std::getline(in, p.command)) continue;
    std::string ranks;
    if (std::getline(in, ranks)) ParseRankLine(ranks, &p);
    out[pid] = std::move(p);
  }
  closedir(d);
  return out;
}

std::string ProcessLabel(const ProcessRole& p) {
  constexpr size_t kMaxCommand = 80;
  std::string command = p.command;
  if (command.size() > kMaxCommand) {
    size_t cut = kMaxCommand;
    while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xC0) == 0x80) --cut;  // a whole UTF-8 character
    command = command.substr(0, cut) + "...";
  }
  if (p.role.empty()) return command;
  if (command.empty()) return p.role;
  return p.role + " (" + command + ")";
}

void NameProcesses(const std::map<int64_t, ProcessRole>& roles, Trace* trace) {
  if (roles.empty()) return;
  std::map<int64_t, StringId> names;
  for (const auto& [pid, role] : roles) {
    const std::string label = ProcessLabel(role);
    if (!label.empty()) names[pid] = trace->strings.Intern(label);
  }
  TrackTable& t = trace->tracks;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.device[i] != kHostDevice || !trace->Str(t.pid_label[i]).empty()) continue;
    auto it = names.find(t.pid[i]);
    if (it != names.end()) t.process_name[i] = it->second;
  }
}

void SetTraceRank(int32_t rank, Trace* trace) {
  for (size_t i = 0; i < trace->tracks.size(); ++i) trace->tracks.rank[i] = rank;
  for (size_t i = 0; i < trace->steps.size(); ++i) trace->steps.rank[i] = rank;
}

size_t AssignRanks(const std::map<int64_t, ProcessRole>& roles, Trace* trace) {
  TrackTable& t = trace->tracks;
  std::set<int64_t> worlds;
  for (const auto& [pid, role] : roles) {
    if (role.rank != kNoRank && role.world_size > 0) worlds.insert(role.world_size);
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.rank[i] != kNoRank || t.device[i] != kHostDevice || !trace->Str(t.pid_label[i]).empty()) continue;
    auto it = roles.find(t.pid[i]);
    if (it != roles.end()) t.rank[i] = it->second.rank;
  }
  for (size_t i = 0; i < trace->steps.size(); ++i) {
    const uint32_t track = trace->steps.track[i];
    if (track < t.size()) trace->steps.rank[i] = t.rank[track];
  }
  if (worlds.size() == 1) trace->metadata["world_size"] = std::to_string(*worlds.begin());
  std::set<int32_t> ranks;
  for (size_t i = 0; i < t.size(); ++i) {
    if (t.rank[i] != kNoRank) ranks.insert(t.rank[i]);
  }
  return ranks.size();
}

}  // namespace aiprof
