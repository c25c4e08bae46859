// libFuzzer harness for validation sample inputs (latency lists, CSV,
// hyperfine and Google Benchmark JSON): arbitrary bytes through
// ParseSampleFile, once as each kind the file name can suggest.
// Seeds: test/data/validation (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "src/importers/samples/sample_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  std::string_view content(reinterpret_cast<const char*>(data), size);
  for (const char* name : {"samples.txt", "samples.csv", "bench.json"}) {
    (void)ParseSampleFile(name, content, SampleFileOptions{});
  }
  return 0;
}
