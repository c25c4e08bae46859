// Compresses bytes in memory for tests of the compressed-input paths (gzip
// with a gzip header, zstd), so that a test compresses the real fixture it
// reads instead of committing compressed copies.
#ifndef AIPROF_TEST_UTIL_COMPRESS_H_
#define AIPROF_TEST_UTIL_COMPRESS_H_

#include <gtest/gtest.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

namespace aiprof::testing {

// One gzip member of `in` at `level`.
inline std::string GzipBytes(const std::string& in, int level = 6) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
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

// One zstd frame of `in` at level 3.
inline std::string ZstdBytes(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  const size_t n = ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// The decompressed content of the gzip file at `path` ("" and a test
// failure when it cannot be read): the same trace in other bytes, another
// input to InputIdentity.
inline std::string GunzipFile(const std::string& path) {
  std::string out;
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  EXPECT_EQ(n, 0) << path;
  gzclose(f);
  return out;
}

}  // namespace aiprof::testing

#endif  // AIPROF_TEST_UTIL_COMPRESS_H_
