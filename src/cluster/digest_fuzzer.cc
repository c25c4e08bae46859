// libFuzzer harness for cluster digests (`aiprof cluster` per-rank files):
// arbitrary bytes through ParseDigest (versioned layout, XXH3 checksum).
// A checksum stops nearly every mutation at the header, so each input is
// parsed twice: as it is, and as a payload given a valid header (magic,
// version, length and checksum filled in) so the payload reader is fuzzed
// too. Seeds: digests of the fixtures (scripts/fuzz.sh), whose header the
// second parse replaces.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include <xxhash.h>

#include "src/cluster/digest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace aiprof;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  size_t consumed = 0;
  (void)ParseDigest(bytes, "fuzz-input", &consumed);
  std::string_view payload = bytes.size() >= kDigestHeaderBytes ? bytes.substr(kDigestHeaderBytes) : bytes;
  std::string framed(kDigestMagic, sizeof(kDigestMagic));
  uint32_t version = kDigestVersion, reserved = 0;
  uint64_t length = payload.size(), checksum = XXH3_64bits(payload.data(), payload.size());
  framed.append(reinterpret_cast<const char*>(&version), 4);
  framed.append(reinterpret_cast<const char*>(&reserved), 4);
  framed.append(reinterpret_cast<const char*>(&length), 8);
  framed.append(reinterpret_cast<const char*>(&checksum), 8);
  framed.append(payload);
  (void)ParseDigest(framed, "fuzz-input (framed)", &consumed);
  return 0;
}
