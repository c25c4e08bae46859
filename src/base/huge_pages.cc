#include "src/base/huge_pages.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace aiprof {
namespace {

// Set in the re-executed process: "-" when GLIBC_TUNABLES was unset,
// else "=" followed by its value.
constexpr const char* kSavedEnv = "AIPROF_SAVED_GLIBC_TUNABLES";

}  // namespace

bool WantHugePageRestart(std::string_view thp_enabled, const char* opt_out, const char* tunables,
                         uint64_t input_bytes) {
  if (opt_out != nullptr && std::strcmp(opt_out, "0") == 0) return false;
  if (thp_enabled.empty() || thp_enabled.find("[never]") != std::string_view::npos) return false;
  if (tunables != nullptr && std::strstr(tunables, "glibc.malloc.hugetlb") != nullptr) return false;
  return input_bytes >= kHugePageInputBytes;
}

std::string TunablesWithHugePages(const char* tunables) {
  std::string out = tunables != nullptr ? tunables : "";
  if (!out.empty()) out += ':';
  out += "glibc.malloc.hugetlb=1";
  return out;
}

void MaybeRestartWithHugePages(int argc, char** argv) {
  if (const char* saved = std::getenv(kSavedEnv)) {
    // The re-executed process: put the environment back for what it starts.
    if (saved[0] == '=') setenv("GLIBC_TUNABLES", saved + 1, 1);
    else unsetenv("GLIBC_TUNABLES");
    unsetenv(kSavedEnv);
    return;
  }
  uint64_t input_bytes = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (argv[i][0] != '-' && stat(argv[i], &st) == 0 && S_ISREG(st.st_mode)) {
      input_bytes += static_cast<uint64_t>(st.st_size);
    }
  }
  if (input_bytes < kHugePageInputBytes) return;  // before reading /sys: the common case
  std::string thp;
  {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::getline(f, thp);
  }
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (!WantHugePageRestart(thp, std::getenv(kHugePagesEnv), tunables, input_bytes)) return;
  const std::string saved = tunables != nullptr ? std::string("=") + tunables : std::string("-");
  const std::string with = TunablesWithHugePages(tunables);
  if (setenv(kSavedEnv, saved.c_str(), 1) != 0 || setenv("GLIBC_TUNABLES", with.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed: go on without huge pages, with the environment as it was.
  if (tunables != nullptr) setenv("GLIBC_TUNABLES", saved.c_str() + 1, 1);
  else unsetenv("GLIBC_TUNABLES");
  unsetenv(kSavedEnv);
}

}  // namespace aiprof
