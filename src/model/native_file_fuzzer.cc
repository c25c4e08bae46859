// libFuzzer harness for the native file (.aiprof): the files `aiprof import`
// and `aiprof trace` write (and earlier SDKs wrote); seeds from `aiprof
// import` (scripts/fuzz.sh). The reader checks every block's checksum, every
// count against the file size and every id against its table. A mutation
// almost always breaks a checksum, so each input is also read without
// comparing them, which sends it on to the structural checks. The SDK's event
// file has its own target (src/importers/sdk/sdk_event_fuzzer.cc).
#include <cstddef>
#include <cstdint>

#include "src/model/native_file.h"
#include "test/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  std::filesystem::path path = fuzz::ScratchDir() / "trace.aiprof";
  fuzz::WriteFile(path, std::string_view(reinterpret_cast<const char*>(data), size));
  auto checked = ReadNativeFile(path.string());
  auto trace = ReadNativeFile(path.string(), NativeReadOptions{.verify_checksums = false});
  // Checksums only ever refuse more.
  if (checked.ok() && !trace.ok()) __builtin_trap();
  if (trace.ok()) {
    // Touch what analyses read: every slice's strings and args through the tables.
    const Trace& t = **trace;
    for (size_t i = 0; i < t.slices.size(); ++i) {
      (void)t.Str(t.slices.name[i]);
      (void)t.tracks.kind[t.slices.track[i]];
    }
  }
  return 0;
}
