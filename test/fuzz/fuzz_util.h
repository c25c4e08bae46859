// Shared by the libFuzzer targets (src/**/*_fuzzer.cc): the path-based
// importers read files, so each input is written to a scratch folder under
// $TMPDIR (one per fuzzer process, reused) and imported from there.
// Folder importers take the first byte as the choice of file name (see
// FileChoice) and the rest as its content; scripts/fuzz.sh builds their seed
// corpora from the fixtures with that byte in front.
#ifndef AIPROF_TEST_FUZZ_FUZZ_UTIL_H_
#define AIPROF_TEST_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>

namespace aiprof::fuzz {

// A scratch folder for this process, emptied on each call.
inline std::filesystem::path ScratchDir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::filesystem::path d = std::filesystem::path(tmp ? tmp : "/tmp") / ("aiprof-fuzz-" + std::to_string(getpid()));
    return d;
  }();
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  return dir;
}

inline void WriteFile(const std::filesystem::path& path, std::string_view bytes) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
}

// The file named by the input's first byte among `names`; the rest is its content.
template <size_t N>
std::string_view FileChoice(const uint8_t* data, size_t size, const char* const (&names)[N], std::string_view* content) {
  if (size == 0) {
    *content = {};
    return names[0];
  }
  *content = std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1);
  return names[data[0] % N];
}

}  // namespace aiprof::fuzz

#endif  // AIPROF_TEST_FUZZ_FUZZ_UTIL_H_
