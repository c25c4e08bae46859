// A hand-made trace for the fuzz harnesses that exercise analyses (which may
// not include the importers themselves: test/layering): written to this
// process's scratch folder and imported as `aiprof` would import it.
#ifndef AIPROF_TEST_FUZZ_FUZZ_TRACE_H_
#define AIPROF_TEST_FUZZ_FUZZ_TRACE_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "src/importers/common/importer_registry.h"
#include "src/model/trace.h"
#include "test/fuzz/fuzz_util.h"

namespace aiprof::fuzz {

// Aborts when the text does not import: the harness itself is broken.
inline std::unique_ptr<Trace> ImportScratchTrace(const std::string& name, std::string_view text) {
  const std::filesystem::path path = ScratchDir() / name;
  WriteFile(path, text);
  StatusOr<std::unique_ptr<Trace>> t = ImportTrace(path.string());
  if (!t.ok()) {
    std::fprintf(stderr, "cannot import the harness's trace: %s\n", std::string(t.status().message()).c_str());
    std::abort();
  }
  return std::move(t).value();
}

}  // namespace aiprof::fuzz

#endif  // AIPROF_TEST_FUZZ_FUZZ_TRACE_H_
