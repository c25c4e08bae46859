// libFuzzer harness for `aiprof diff --map FILE` (the user's op-name map,
// YAML with plain names and RE2 regexes): arbitrary bytes through
// DiffNameMap::Parse, and every map that parses asked for a few names of
// each side, including the longest name the input itself holds, so a regex
// is run on text the fuzzer controls. Seeds: scripts/fuzz.sh writes maps in
// docs/diff.md's layout.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "src/analysis/diff/name_map.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto map = aiprof::DiffNameMap::Parse(text, "fuzz.yaml");
  if (!map.ok()) return 0;
  const std::string_view names[] = {"aten::cudnn_convolution", "sm90_xmma_gemm_f16f16_f32", "Cijk_Ailk_Bljk", "", text};
  for (int side : {0, 1}) {
    for (std::string_view name : names) (void)map->Find(side, name);
  }
  return 0;
}
