// libFuzzer harness for the compressed-input readers (ByteSource: gzip,
// concatenated gzip members and their trailer, zstd frames, the background
// decompression thread): arbitrary bytes written to a file and read to the
// end, or to the first error, in uneven reads. The first byte chooses the
// foreground or background reader and the read size; the rest is the file
// (gzip and zstd are recognised by their magic bytes, so most inputs that
// survive mutation keep one). Decompressed output is capped so a small
// input cannot expand without bound in one run.
//
// An input that reads to its end is also decompressed into a private copy
// (DecompressedCopy, how a compressed .aiprof or Nsight export is read):
// the copy must hold exactly the bytes the stream gave, by its /proc path
// and by the name OpenableName gives it.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "src/importers/common/byte_source.h"
#include "src/importers/common/decompressed_copy.h"
#include "test/fuzz/fuzz_util.h"

namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The copy of `path` holds `expected` (the whole decompressed stream).
void CheckCopy(const std::string& path, const std::string& expected) {
  using namespace aiprof;
  StatusOr<std::unique_ptr<DecompressedCopy>> copy = DecompressedCopy::Create(path, "fuzz input");
  if (!copy.ok() || (*copy)->bytes() != expected.size() || Slurp((*copy)->path()) != expected) __builtin_trap();
  StatusOr<std::string> name = OpenableName((*copy)->path());
  if (name.ok()) {
    if (Slurp(*name) != expected) __builtin_trap();
    DropOpenableName((*copy)->path());
    if (std::filesystem::exists(*name)) __builtin_trap();
  }
}

}  // namespace

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
  std::string all;  // kept while small, for the copy's check
  size_t total = 0;
  bool ended = false;
  while (total < (size_t{64} << 20)) {
    StatusOr<size_t> got = (*src)->Read(buf.data(), buf.size());
    if (!got.ok()) break;
    if (*got == 0) {
      ended = true;
      break;
    }
    total += *got;
    if (total <= (size_t{4} << 20)) all.append(buf.data(), *got);
  }
  if (ended && total <= (size_t{4} << 20) && std::string((*src)->compression()) != "none") {
    CheckCopy(path.string(), all);
  }
  return 0;
}
