// libFuzzer harness for the compressed-input readers (ByteSource: gzip,
// concatenated gzip members and their trailer, zstd frames, the background
// decompression thread): arbitrary bytes written to a file and read to the
// end, or to the first error, in uneven reads. The first byte chooses the
// foreground or background reader and the read size; the rest is the file
// (gzip and zstd are recognised by their magic bytes, so most inputs that
// survive mutation keep one). Decompressed output is capped so a small
// input cannot expand without bound in one run.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/importers/common/byte_source.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  if (size < 1) return 0;
  const bool background = data[0] & 1;
  const size_t step = size_t{1} + (data[0] >> 1) * 97;
  const std::filesystem::path path = fuzz::ScratchDir() / "input";
  fuzz::WriteFile(path, std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  StatusOr<std::unique_ptr<ByteSource>> src = ByteSource::Open(path.string(), background);
  if (!src.ok()) return 0;
  std::string buf(step, '\0');
  size_t total = 0;
  while (total < (size_t{64} << 20)) {
    StatusOr<size_t> got = (*src)->Read(buf.data(), buf.size());
    if (!got.ok() || *got == 0) break;
    total += *got;
  }
  return 0;
}
