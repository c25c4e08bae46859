#include "src/base/chunked_vector.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

TEST(ChunkedVectorTest, GrowsAcrossBlocksAndPermutes) {
  ChunkedVector<int64_t> v;
  const size_t n = ChunkedVector<int64_t>::kBlockSize * 2 + 5;
  for (size_t i = 0; i < n; ++i) v.push_back(static_cast<int64_t>(i));
  EXPECT_EQ(v.size(), n);
  EXPECT_EQ(v.block_count(), 3u);
  EXPECT_EQ(v[n - 1], static_cast<int64_t>(n - 1));
  std::vector<uint32_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = static_cast<uint32_t>(n - 1 - i);
  v.Permute(order);
  EXPECT_EQ(v[0], static_cast<int64_t>(n - 1));
  EXPECT_EQ(v[n - 1], 0);
}

TEST(ChunkedVectorTest, AdoptedMemoryIsNeverWrittenPastItsEnd) {
  const size_t n = ChunkedVector<int32_t>::kBlockSize + 3;
  std::vector<int32_t> backing(n + 4, 7);
  backing[n] = -1;  // the next "column" in a mapped file
  ChunkedVector<int32_t> v;
  v.AdoptExternal(backing.data(), n);
  EXPECT_EQ(v.size(), n);
  EXPECT_EQ(v[n - 1], 7);
  v.push_back(42);
  EXPECT_EQ(v[n], 42);
  EXPECT_EQ(backing[n], -1);  // untouched
  EXPECT_EQ(v[n - 1], 7);     // the copied tail kept its values
  ChunkedVector<int32_t> w;
  w.AdoptExternal(backing.data(), 2);
  w.resize(10);
  w[9] = 5;
  EXPECT_EQ(backing[9], 7);
}

TEST(ChunkedVectorTest, AShrunkAdoptedColumnAppendsIntoItsOwnCopy) {
  // An adopted column of two blocks shrunk into its first block: the next
  // append went to the last block's copy with an underflowed count (a heap
  // overflow under ASan) and wrote the value into the adopted first block.
  const size_t n = ChunkedVector<int32_t>::kBlockSize + 3;
  std::vector<int32_t> backing(n, 7);
  ChunkedVector<int32_t> v;
  v.AdoptExternal(backing.data(), n);
  v.resize(100);
  v.push_back(42);
  EXPECT_EQ(v.size(), 101u);
  EXPECT_EQ(v[100], 42);
  EXPECT_EQ(v[99], 7);
  EXPECT_EQ(backing[100], 7);  // the adopted memory is not written
  for (int i = 0; i < 70'000; ++i) v.push_back(i);
  EXPECT_EQ(v[101 + 69'999], 69'999);
  EXPECT_EQ(v[100], 42);
  // Shrunk to a block boundary, then grown by resize.
  ChunkedVector<int32_t> w;
  w.AdoptExternal(backing.data(), n);
  w.resize(ChunkedVector<int32_t>::kBlockSize);
  w.resize(ChunkedVector<int32_t>::kBlockSize + 1);
  w[ChunkedVector<int32_t>::kBlockSize] = 5;
  EXPECT_EQ(backing[ChunkedVector<int32_t>::kBlockSize], 7);
  EXPECT_EQ(w[ChunkedVector<int32_t>::kBlockSize - 1], 7);
}

}  // namespace
}  // namespace aiprof
