// libFuzzer harness for the Nsight Systems SQLite importer: arbitrary bytes
// as the database file (SQLite's own page checks, then our table checks,
// step budget and time ranges) through TraceBuilder::Finalize. Seeds: the
// nsys fixtures. Build and run: scripts/fuzz.sh (docs/importers.md).
#include <cstddef>
#include <cstdint>

#include "src/importers/nsys/nsys_sqlite_importer.h"
#include "src/model/trace_builder.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  std::filesystem::path path = fuzz::ScratchDir() / "report.sqlite";
  fuzz::WriteFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  Trace trace;
  TraceBuilder builder(&trace);
  if (ImportNsysSqlite(path.string(), &builder).ok()) (void)builder.Finalize();
  return 0;
}
