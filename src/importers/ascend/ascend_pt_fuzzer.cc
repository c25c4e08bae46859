// libFuzzer harness for torch_npu (*_ascend_pt) folders: the first byte
// picks one of the folder's files, the rest is its content, imported through
// ImportAscendPtFolder (every side file's parser, the trace_view.json path
// through the Chrome JSON parser) and Finalize. A file other than the three
// that make a folder recognizable comes with a one-line step_trace_time.csv.
// Content starting with gzip or zstd magic is written as NAME.gz / NAME.zst.
// Seeds: the ascend-pt fixtures, one file each (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/importers/ascend/ascend_pt_importer.h"
#include "test/fuzz/fuzz_util.h"

namespace {
constexpr const char* kFiles[] = {"trace_view.json",     "kernel_details.csv",  "step_trace_time.csv",
                                  "op_statistic.csv",    "api_statistic.csv",   "memory_record.csv",
                                  "npu_module_mem.csv",  "operator_memory.csv", "l2_cache.csv",
                                  "communication.json",  "communication_matrix.json", "operator_details.csv"};
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
  std::filesystem::path root = fuzz::ScratchDir() / "rank0_ascend_pt";
  std::filesystem::path out = root / "ASCEND_PROFILER_OUTPUT";
  // Compressed content is written as `gzip -r` / `zstd` leave it (NAME.gz,
  // NAME.zst), so the member lookup of folder_member.h is fuzzed too.
  fuzz::WriteFile(out / (std::string(name) + CompressedSuffix(content)), content);
  if (name != "trace_view.json" && name != "kernel_details.csv" && name != "step_trace_time.csv") {
    fuzz::WriteFile(out / "step_trace_time.csv", "Step,Computing,Communication(Not Overlapped),Free\n1,10,0,5\n");
  }
  (void)ImportAscendPtFolder(root.string());
  return 0;
}
