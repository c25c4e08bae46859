// libFuzzer harness for the SDK's event file (src/sdk/event_stream.h):
// arbitrary bytes through the importer (every count checked against the
// file's size, every name index against the string table, times through
// TraceBuilder's range checks) and TraceBuilder::Finalize. Seeds: files
// the SDK's test program writes (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>

#include "src/importers/sdk/sdk_event_importer.h"
#include "src/model/trace_builder.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  std::filesystem::path path = fuzz::ScratchDir() / "events.aiprof";
  fuzz::WriteFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  Trace trace;
  TraceBuilder builder(&trace);
  if (ImportSdkEventFile(path.string(), &builder).ok()) (void)builder.Finalize();
  return 0;
}
