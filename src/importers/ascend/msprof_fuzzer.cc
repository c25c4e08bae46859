// libFuzzer harness for msprof (PROF_*) folders: the first byte picks one of
// the files msprof writes into mindstudio_profiler_output/, the rest is its
// content, imported through ImportMsprofFolder and Finalize. Seeds: the
// Ascend fixtures' CSV and JSON files (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/importers/ascend/msprof_importer.h"
#include "test/fuzz/fuzz_util.h"

namespace {
constexpr const char* kFiles[] = {"msprof_0.json", "op_summary_0.csv", "op_statistic_0.csv", "api_statistic_0.csv",
                                  "step_trace_0.csv", "task_time_0.csv"};
// ".gz" or ".zst" for content with that compression's magic bytes, else "".
std::string CompressedSuffix(std::string_view content) {
  if (content.starts_with("\x1f\x8b")) return ".gz";
  if (content.starts_with("\x28\xb5\x2f\xfd")) return ".zst";
  return "";
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  std::string_view content;
  std::string_view name = fuzz::FileChoice(data, size, kFiles, &content);
  std::filesystem::path root = fuzz::ScratchDir() / "PROF_000001_fuzz";
  // Compressed content as `gzip -r` / `zstd` leave it (folder_member.h).
  fuzz::WriteFile(root / "mindstudio_profiler_output" / (std::string(name) + CompressedSuffix(content)), content);
  (void)ImportMsprofFolder(root.string());
  return 0;
}
