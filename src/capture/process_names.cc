#include "src/capture/process_names.h"

#include <dirent.h>

#include <cstdlib>
#include <fstream>

namespace aiprof {

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

}  // namespace aiprof
