// libFuzzer harness for rule files (YAML): arbitrary bytes through
// ParseRules (yaml-cpp, then our schema, expressions checked against the
// metric catalogue). Seeds: rules/*.yaml and test/data/rules (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <string>

#include "src/analysis/rules/rule_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)aiprof::ParseRules(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  return 0;
}
