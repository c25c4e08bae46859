// ByteSource: plain, gzip and zstd inputs read the same bytes in the
// foreground, in the background and (plain) in place; damage is an error
// naming the file, after the bytes before it.
#include "src/importers/common/byte_source.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdlib>
#include <random>
#include <string>

#include "src/base/mapped_inputs.h"
#include "test/util/compress.h"
#include "test/util/temp_file.h"

namespace aiprof {
namespace {

using testing::GzipBytes;
using testing::ZstdBytes;

// 11 MB of text: more than two background chunks.
std::string Payload() {
  std::mt19937 rng(1);
  std::string s;
  while (s.size() < (11u << 20)) s += "{\"name\": \"op" + std::to_string(rng() % 1000) + "\", \"ts\": " + std::to_string(rng()) + "},\n";
  return s;
}

StatusOr<std::string> ReadAllOf(const std::string& path, bool background, size_t step) {
  ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> src, ByteSource::Open(path, background));
  std::string out, buf(step, '\0');
  for (;;) {
    ASSIGN_OR_RETURN(size_t got, src->Read(buf.data(), buf.size()));
    if (got == 0) return out;
    out.append(buf.data(), got);
  }
}

TEST(ByteSourceTest, SameBytesForegroundBackgroundAndMapped) {
  testing::TempDir dir;
  const std::string text = Payload();
  const std::string plain = dir.Write("t.json", text);
  const std::string gz = dir.Write("t.json.gz", GzipBytes(text));
  const std::string zst = dir.Write("t.json.zst", ZstdBytes(text));
  for (const std::string& path : {plain, gz, zst}) {
    for (bool background : {false, true}) {
      for (size_t step : {size_t{4096}, size_t{3 << 20}}) {
        StatusOr<std::string> got = ReadAllOf(path, background, step);
        ASSERT_TRUE(got.ok()) << got.status().message();
        EXPECT_TRUE(got.value() == text) << path << " background " << background << " step " << step;
      }
    }
  }
  auto src = ByteSource::Open(plain);
  ASSERT_TRUE(src.ok());
  std::string_view mapped = src.value()->Map();
  ASSERT_EQ(mapped.size(), text.size());
  EXPECT_TRUE(mapped == text);
  // The padding after the end reads as zeros.
  for (size_t i = 0; i < ByteSource::kMapPaddingBytes; ++i) ASSERT_EQ(mapped.data()[text.size() + i], '\0');
  src.value()->ReleaseMappedBefore(text.size() / 2);
  EXPECT_TRUE(mapped.substr(0, 100) == text.substr(0, 100));  // released pages read again from the file
  // Compressed inputs are not mapped.
  auto gz_src = ByteSource::Open(gz);
  ASSERT_TRUE(gz_src.ok());
  EXPECT_TRUE(gz_src.value()->Map().empty());
}

TEST(ByteSourceTest, TruncatedCompressedInputIsAnErrorInTheBackgroundToo) {
  testing::TempDir dir;
  const std::string text = Payload();
  std::string gz = GzipBytes(text), zst = ZstdBytes(text);
  const std::string gz_path = dir.Write("cut.json.gz", gz.substr(0, gz.size() / 2));
  const std::string zst_path = dir.Write("cut.json.zst", zst.substr(0, zst.size() / 2));
  for (const std::string& path : {gz_path, zst_path}) {
    for (bool background : {false, true}) {
      StatusOr<std::string> got = ReadAllOf(path, background, 1 << 20);
      ASSERT_FALSE(got.ok()) << path;
      EXPECT_NE(got.status().message().find(path), std::string::npos) << got.status().message();
      EXPECT_NE(got.status().message().find("truncated"), std::string::npos) << got.status().message();
    }
  }
}

// After a gzip member: another member continues the stream, zero padding
// ends it, anything else is an error at its compressed byte (was ignored).
TEST(ByteSourceTest, GzipTrailingDataIsAnErrorAndPaddingIsNot) {
  testing::TempDir dir;
  const std::string text = "{\"traceEvents\": []}\n";
  const std::string gz = GzipBytes(text);
  const std::string garbage = dir.Write("g.json.gz", gz + "garbage");
  const std::string padded = dir.Write("p.json.gz", gz + std::string(512, '\0'));
  const std::string two = dir.Write("two.json.gz", gz + GzipBytes("more\n"));
  for (bool background : {false, true}) {
    StatusOr<std::string> got = ReadAllOf(garbage, background, 4096);
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find(garbage + ": data after the end of the gzip stream at compressed byte " +
                                          std::to_string(gz.size())),
              std::string::npos)
        << got.status().message();
    got = ReadAllOf(padded, background, 4096);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, text);
    got = ReadAllOf(two, background, 4096);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, text + "more\n");
  }
}

// A first member that ends exactly where the reader's 1 MiB compressed
// chunk ends: the second member starts in the next chunk and is still read
// (was dropped: only the bytes already in the chunk were looked at).
TEST(ByteSourceTest, GzipMemberEndingAtAChunkBoundaryIsFollowed) {
  testing::TempDir dir;
  constexpr size_t kChunk = 1 << 20;  // byte_source.cc's kCompressedChunkBytes
  std::mt19937 rng(7);
  std::string text(kChunk, 'x');
  for (char& c : text) c = static_cast<char>('a' + rng() % 26);
  std::string first = GzipBytes(text, 0);  // stored blocks: one output byte per input byte
  for (int i = 0; i < 8 && first.size() != kChunk; ++i) {
    text.resize(text.size() + kChunk - first.size(), 'q');
    first = GzipBytes(text, 0);
  }
  ASSERT_EQ(first.size(), kChunk);
  const std::string path = dir.Write("b.json.gz", first + GzipBytes("second\n"));
  StatusOr<std::string> got = ReadAllOf(path, /*background=*/false, 1 << 16);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->size(), text.size() + 7);
  EXPECT_TRUE(got->substr(text.size()) == "second\n");
}

}  // namespace
}  // namespace aiprof

namespace aiprof {
namespace {

// A zstd frame of RLE blocks (docs: RFC 8878): 4 bytes per 128 KiB of
// output, so `blocks` blocks of spaces expand about 32,768 times.
std::string ZstdRleBomb(size_t blocks) {
  auto header = [](uint32_t last, uint32_t type, uint32_t size) {
    uint32_t v = last | (type << 1) | (size << 3);
    return std::string{static_cast<char>(v & 0xff), static_cast<char>((v >> 8) & 0xff), static_cast<char>(v >> 16)};
  };
  std::string out = "\x28\xb5\x2f\xfd";
  out += std::string("\x00\x38", 2);  // no content size, 128 KiB window
  const std::string prefix = "{\"traceEvents\":[";
  out += header(0, 0, static_cast<uint32_t>(prefix.size())) + prefix;
  for (size_t i = 0; i < blocks; ++i) out += header(0, 1, 128 << 10) + " ";
  out += header(1, 0, 2) + "]}";
  return out;
}

struct ExpansionLimits {
  ExpansionLimits(uint64_t free_bytes, uint64_t ratio) { SetExpansionLimitsForTesting(free_bytes, ratio); }
  ~ExpansionLimits() { SetExpansionLimitsForTesting(0, 0); }
};

// A 33 MB zstd file of RLE blocks inflated to 1 TB of whitespace and kept
// `aiprof summary` busy for hours (input trial, 'in'); now the read stops
// once the output passes the free bytes at more than the ratio.
TEST(ByteSourceTest, DecompressionBombStopsWithAnErrorNamingTheFileAndPlace) {
  testing::TempDir dir;
  ExpansionLimits limits(4 << 20, 1000);
  const std::string bomb = dir.Write("bomb.json.zst", ZstdRleBomb(256));  // 32 MiB from 1 KiB
  for (bool background : {false, true}) {
    StatusOr<std::string> got = ReadAllOf(bomb, background, 1 << 16);
    ASSERT_FALSE(got.ok()) << "background " << background;
    EXPECT_NE(got.status().message().find(bomb + ": zstd stream expands more than 1000 times"), std::string::npos)
        << got.status().message();
    EXPECT_NE(got.status().message().find("stopped at compressed byte"), std::string::npos);
  }
  // gzip: 16 MiB of one byte deflates about 1,000 times.
  const std::string gz = dir.Write("zeros.json.gz", GzipBytes(std::string(16 << 20, ' '), 9));
  {
    ExpansionLimits tighter(4 << 20, 500);
    StatusOr<std::string> got = ReadAllOf(gz, false, 1 << 16);
    ASSERT_FALSE(got.ok());
    EXPECT_NE(got.status().message().find(gz + ": gzip stream expands more than 500 times"), std::string::npos);
  }
  // A read after the end returns 0 again, in the background too (it
  // copied from a moved-from chunk: a SEGV once the tokenizer handed on a
  // batch after EOF).
  for (bool background : {false, true}) {
    StatusOr<std::unique_ptr<ByteSource>> src =
        ByteSource::Open(dir.Write("small.json.gz", GzipBytes(Payload())), background);
    ASSERT_TRUE(src.ok());
    std::string buf(1 << 20, '\0');
    for (;;) {
      StatusOr<size_t> got = (*src)->Read(buf.data(), buf.size());
      ASSERT_TRUE(got.ok());
      if (*got == 0) break;
    }
    for (int i = 0; i < 3; ++i) {
      StatusOr<size_t> again = (*src)->Read(buf.data(), buf.size());
      ASSERT_TRUE(again.ok());
      EXPECT_EQ(*again, 0u) << "background " << background;
    }
  }
  // Real text under the same limits reads whole: 11 MB compresses far less.
  const std::string text = Payload();
  for (const std::string& path : {dir.Write("t.json.gz", GzipBytes(text)), dir.Write("t.json.zst", ZstdBytes(text))}) {
    StatusOr<std::string> got = ReadAllOf(path, false, 1 << 16);
    ASSERT_TRUE(got.ok()) << got.status().message();
    EXPECT_EQ(*got, text);
  }
}

// A mapped input that another program truncates while it is parsed (a
// profiler rewriting its trace, a copy over it) raised SIGBUS: `aiprof
// summary` ended with "Bus error", exit 135, naming nothing (bad-input
// audit: a 137 MB trace truncated 0.2 s into its import). A mapping is
// registered, and the command line's handler names the file and exits 1.
TEST(ByteSourceDeathTest, MappedFileTruncatedWhileReadIsNamedAndExits1) {
  testing::TempDir dir;
  const std::string path = dir.Write("shrinks.json", std::string(1 << 20, ' '));
  EXPECT_EXIT(
      {
        InstallMappedInputBusHandler();
        auto source = ByteSource::Open(path);
        if (!source.ok()) std::_Exit(3);
        const std::string_view bytes = (*source)->Map();
        if (bytes.empty() || ::truncate(path.c_str(), 0) != 0) std::_Exit(4);
        volatile char last = bytes[bytes.size() - 1];
        (void)last;
        std::_Exit(5);
      },
      ::testing::ExitedWithCode(1), "shrinks.json: the file shrank while it was read");
}

}  // namespace
}  // namespace aiprof
