// libFuzzer harness for the Chrome JSON importer: arbitrary bytes through
// the tokenizer, the parser and TraceBuilder::Finalize. Build with
//   CXX=clang++ cmake -S . -B build-fuzz -DAIPROF_BUILD_FUZZERS=ON \
//       -DAIPROF_SANITIZE=address,undefined,fuzzer-no-link
//   cmake --build build-fuzz --target chrome_json_fuzzer
//   build-fuzz/chrome_json_fuzzer -max_total_time=60 test/data
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "src/importers/common/byte_source.h"
#include "src/importers/json/chrome_json_importer.h"
#include "src/importers/json/chrome_json_parser.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"
#include "test/fuzz/fuzz_util.h"

namespace aiprof {
namespace {

// Serves the fuzzer's bytes in small, uneven reads to exercise refills.
class MemorySource : public ByteSource {
 public:
  MemorySource(const uint8_t* data, size_t size) : data_(data), size_(size) { path_ = "fuzz-input"; }
  StatusOr<size_t> Read(char* dst, size_t n) override {
    size_t k = std::min<size_t>({n, size_ - pos_, size_t{7} + pos_ % 61});
    std::memcpy(dst, data_ + pos_, k);
    pos_ += k;
    return k;
  }
  uint64_t file_bytes_read() const override { return pos_; }
  const char* compression() const override { return "none"; }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

// The import `aiprof` runs (ParseChromeJsonEvents: the input mapped in
// place, cut into batches of `batch_bytes`, parsed by `workers` threads and
// merged in order), then Finalize: a summary of the model, to compare.
std::string ImportThroughBatches(const std::string& path, size_t workers) {
  Trace trace;
  TraceBuilder builder(&trace);
  ChromeJsonOptions options;
  options.workers = workers;
  options.batch_bytes = 256;
  std::string compression;
  Status status = ParseChromeJsonEvents(path, &builder, options, &compression);
  if (status.ok()) status = builder.Finalize();
  if (!status.ok()) return "error " + status.message();
  std::string out = std::to_string(trace.slices.size()) + " slices " + std::to_string(trace.instants.size()) +
                    " instants " + std::to_string(trace.counters.size()) + " counters " +
                    std::to_string(trace.flows.size()) + " flows " + std::to_string(trace.tracks.size()) + " tracks";
  for (const auto& [kind, entry] : trace.diagnostics.entries()) out += " " + kind + "=" + std::to_string(entry.count);
  return out;
}

}  // namespace
}  // namespace aiprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  {
    // The per-event sink path (Ascend's trace_view.json goes this way).
    Trace trace;
    TraceBuilder builder(&trace);
    MemorySource source(data, size);
    ChromeJsonParser parser("fuzz-input", &builder);
    ChromeJsonTokenizer tokenizer(&source, &parser, /*threaded=*/false);
    tokenizer.SetBufferLimitsForTesting(256, 4096);
    if (tokenizer.Run().ok()) (void)builder.Finalize();
  }
  // The batch path of `aiprof summary`, on this thread and on two workers:
  // the model must not depend on the number of workers (chrome_json_importer.h).
  const std::filesystem::path path = fuzz::ScratchDir() / "input.json";
  fuzz::WriteFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string serial = ImportThroughBatches(path.string(), 0);
  const std::string parallel = ImportThroughBatches(path.string(), 2);
  if (serial != parallel) {
    std::fprintf(stderr, "workers 0: %s\nworkers 2: %s\n", serial.c_str(), parallel.c_str());
    __builtin_trap();
  }
  return 0;
}
