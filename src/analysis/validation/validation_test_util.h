// Test helpers for the validation tests: paths of checked-in data and of the
// shared real-trace fixtures. Visible for testing only.
#ifndef AIPROF_SRC_ANALYSIS_VALIDATION_VALIDATION_TEST_UTIL_H_
#define AIPROF_SRC_ANALYSIS_VALIDATION_VALIDATION_TEST_UTIL_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace aiprof::testing {

// The repository root (set by test/CMakeLists.txt; __FILE__ may be relative
// when ccache rewrites paths).
inline std::filesystem::path RepoRoot() { return AIPROF_SOURCE_DIR; }

// The real torch-cpu traces: $AIPROF_FIXTURES/torch-cpu, else ../shared/fixtures/torch-cpu beside the repository.
inline std::filesystem::path TorchCpuFixtures() {
  if (const char* env = std::getenv("AIPROF_FIXTURES"); env && *env) return std::filesystem::path(env) / "torch-cpu";
  return std::filesystem::path(AIPROF_FIXTURES_DIR) / "torch-cpu";
}

}  // namespace aiprof::testing

#endif  // AIPROF_SRC_ANALYSIS_VALIDATION_VALIDATION_TEST_UTIL_H_
