// ByteSource: plain, gzip and zstd inputs read the same bytes in the
// foreground, in the background and (plain) in place; damage is an error
// naming the file, after the bytes before it.
#include "src/importers/common/byte_source.h"

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <random>
#include <string>

#include "test/util/temp_file.h"

namespace aiprof {
namespace {

std::string GzipBytes(const std::string& in, int level = 6) {
  z_stream zs{};
  deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&zs, in.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

std::string Zstd(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

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
  const std::string zst = dir.Write("t.json.zst", Zstd(text));
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
  std::string gz = GzipBytes(text), zst = Zstd(text);
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
