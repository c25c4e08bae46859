#include "src/capture/allocator_probe.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>

extern char** environ;

namespace aiprof {
namespace {

constexpr size_t kMaxValue = 512;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

bool IsAllocatorSetting(std::string_view name) {
  static constexpr std::string_view kExact[] = {"LD_PRELOAD", "MALLOC_CONF", "GLIBC_TUNABLES",
                                                "TCMALLOC_RELEASE_RATE", "TCMALLOC_AGGRESSIVE_DECOMMIT",
                                                "MIMALLOC_PURGE_DELAY"};
  for (std::string_view e : kExact) {
    if (name == e) return true;
  }
  // glibc's older spellings: MALLOC_TRIM_THRESHOLD_, MALLOC_MMAP_THRESHOLD_,
  // MALLOC_TOP_PAD_, MALLOC_MMAP_MAX_, MALLOC_ARENA_MAX.
  return name.size() > 7 && name.substr(0, 7) == "MALLOC_" &&
         (name.back() == '_' || name == "MALLOC_ARENA_MAX");
}

std::string AllocatorSettings(const std::vector<std::string>& env) {
  std::string out;
  for (const std::string& kv : env) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || !IsAllocatorSetting(std::string_view(kv).substr(0, eq))) continue;
    out += (out.empty() ? "" : "; ") + (kv.size() - eq - 1 > kMaxValue ? kv.substr(0, eq + 1 + kMaxValue) + "..." : kv);
  }
  return out;
}

std::string AllocatorSettingsOfSelf() {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
  return AllocatorSettings(env);
}

std::string AllocatorSettingsOfProcess(int32_t pid) {
  const std::string raw = ReadFile("/proc/" + std::to_string(pid) + "/environ");
  std::vector<std::string> env;
  size_t b = 0;
  for (size_t i = 0; i <= raw.size(); ++i) {
    if (i == raw.size() || raw[i] == '\0') {
      if (i > b) env.push_back(raw.substr(b, i - b));
      b = i + 1;
    }
  }
  return AllocatorSettings(env);
}

bool AllocatorFromMaps(std::string_view maps, std::string* library) {
  bool libc = false;
  std::string found;
  size_t b = 0;
  while (b < maps.size()) {
    size_t e = maps.find('\n', b);
    if (e == std::string_view::npos) e = maps.size();
    const std::string_view line = maps.substr(b, e - b);
    b = e + 1;
    const size_t slash = line.find('/');
    if (slash == std::string_view::npos) continue;
    const std::string_view path = line.substr(slash);
    const std::string_view file = path.substr(path.rfind('/') + 1);
    if (file.rfind("libc.so", 0) == 0 || file.rfind("libc-", 0) == 0) libc = true;
    if (found.empty() && (file.find("jemalloc") != std::string_view::npos || file.find("tcmalloc") != std::string_view::npos ||
                          file.find("mimalloc") != std::string_view::npos)) {
      found = std::string(path);
    }
  }
  if (!libc) return false;
  *library = found;
  return true;
}

bool ProbeAllocatorLibrary(int32_t pid, std::string* library) {
  const std::string maps = ReadFile("/proc/" + std::to_string(pid) + "/maps");
  return !maps.empty() && AllocatorFromMaps(maps, library);
}

std::string ExecutableOf(int32_t pid) {
  char exe[4096];
  const ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), exe, sizeof(exe));
  return n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
}

bool RunsAnotherExecutable(int32_t pid) {
  const std::string exe = ExecutableOf(pid);
  return !exe.empty() && exe != ExecutableOf(getpid());
}

std::string AllocatorName(std::string_view library) {
  const std::string_view file = library.substr(library.rfind('/') + 1);
  if (file.find("jemalloc") != std::string_view::npos) return "jemalloc";
  if (file.find("tcmalloc") != std::string_view::npos) return "tcmalloc";
  if (file.find("mimalloc") != std::string_view::npos) return "mimalloc";
  return "glibc";
}

}  // namespace aiprof
