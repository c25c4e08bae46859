// Test helpers for the libraries above the importers and for the analyses, whose
// tests need traces: import a hand-made JSON trace written inline in
// a test, or a real fixture from ../shared/fixtures (AIPROF_FIXTURES
// overrides). Visible for testing.
#ifndef AIPROF_TEST_UTIL_TRACE_FIXTURES_H_
#define AIPROF_TEST_UTIL_TRACE_FIXTURES_H_

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/importers/common/importer_registry.h"
#include "src/importers/graph_capture/graph_capture_merge.h"
#include "src/model/trace.h"
#include "test/util/temp_file.h"

namespace aiprof::testing {

// Folder of the real fixtures: $AIPROF_FIXTURES, else <repo>/../shared/fixtures.
inline std::string FixturesDir() {
  if (const char* env = std::getenv("AIPROF_FIXTURES")) return env;
  return AIPROF_FIXTURES_DIR;  // set by test/CMakeLists.txt (../shared/fixtures beside the repo)
}

// Imports `path` (a file or folder) as the CLI would, the status as is (for
// tests that expect an error, or traces written by the test itself).
inline StatusOr<std::unique_ptr<Trace>> ImportPath(const std::string& path) { return ImportTrace(path); }

// Imports `path` (a file or folder); nullptr (and a test failure naming the
// error) if it cannot be read.
inline std::unique_ptr<Trace> MustImport(const std::string& path) {
  auto r = ImportTrace(path);
  EXPECT_TRUE(r.ok()) << path << ": " << r.status().message();
  return r.ok() ? std::move(r).value() : nullptr;
}

// The error importing `path` gives; "" (and a test failure) when it imports.
inline std::string ImportError(const std::string& path) {
  auto r = ImportTrace(path);
  EXPECT_FALSE(r.ok()) << path;
  return r.ok() ? "" : r.status().message();
}

// Imports fixture `relative` (e.g. "torch-cpu/convnet_bs8_mixed.kineto.json");
// nullptr (and a test failure) if it cannot be read.
inline std::unique_ptr<Trace> ImportFixture(const std::string& relative) {
  std::string path = FixturesDir() + "/" + relative;
  auto r = ImportTrace(path);
  if (!r.ok()) {
    ADD_FAILURE() << "cannot import " << path << ": " << r.status().message();
    return nullptr;
  }
  return std::move(r).value();
}

// Imports a hand-made trace given as JSON text.
// A replay trace merged with its graph capture traces (src/importers/graph_capture/),
// for the analyses' tests: test/util may reach the importers, analysis code may not.
inline StatusOr<std::unique_ptr<Trace>> ImportWithCaptures(const std::string& replay,
                                                           const std::vector<std::string>& captures) {
  return ImportWithGraphCaptures(replay, captures);
}

inline std::unique_ptr<Trace> ImportJsonText(std::string_view json) {
  TempDir dir;
  std::string path = dir.Write("trace.json", json);
  auto r = ImportTrace(path);
  if (!r.ok()) {
    ADD_FAILURE() << "cannot import hand-made trace: " << r.status().message();
    return nullptr;
  }
  return std::move(r).value();
}

// Imports hand-made per-rank traces (file name → JSON text) written into one
// folder, as `aiprof analyze <folder>` would.
inline std::unique_ptr<Trace> ImportJsonFolder(const std::vector<std::pair<std::string, std::string>>& files) {
  TempDir dir;
  for (const auto& [name, json] : files) dir.Write(name, json);
  auto r = ImportTrace(dir.path());
  if (!r.ok()) {
    ADD_FAILURE() << "cannot import hand-made folder: " << r.status().message();
    return nullptr;
  }
  return std::move(r).value();
}

}  // namespace aiprof::testing

#endif  // AIPROF_TEST_UTIL_TRACE_FIXTURES_H_
