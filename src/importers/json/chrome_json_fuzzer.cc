// libFuzzer harness for the Chrome JSON importer: arbitrary bytes through
// the tokenizer, the parser and TraceBuilder::Finalize. Build with
//   CXX=clang++ cmake -S . -B build-fuzz -DAIPROF_BUILD_FUZZERS=ON \
//       -DAIPROF_SANITIZE=address,undefined,fuzzer-no-link
//   cmake --build build-fuzz --target chrome_json_fuzzer
//   build-fuzz/chrome_json_fuzzer -max_total_time=60 test/data
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>

#include "src/importers/common/byte_source.h"
#include "src/importers/json/chrome_json_parser.h"
#include "src/importers/json/chrome_json_tokenizer.h"
#include "src/model/trace_builder.h"

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

}  // namespace
}  // namespace aiprof

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  Trace trace;
  TraceBuilder builder(&trace);
  MemorySource source(data, size);
  ChromeJsonParser parser("fuzz-input", &builder);
  ChromeJsonTokenizer tokenizer(&source, &parser, /*threaded=*/false);
  tokenizer.SetBufferLimitsForTesting(256, 4096);
  if (tokenizer.Run().ok()) (void)builder.Finalize();
  return 0;
}
