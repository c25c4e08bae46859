#include "src/base/parallel.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace aiprof {
namespace {

struct Key {
  int64_t ts;
  uint32_t index;
};
bool Less(const Key& a, const Key& b) { return a.ts != b.ts ? a.ts < b.ts : a.index < b.index; }

std::vector<Key> Make(size_t n, int pattern, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Key> v(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t ts = 0;
    switch (pattern) {
      case 0: ts = static_cast<int64_t>(rng() % 1000); break;                          // random, many ties
      case 1: ts = static_cast<int64_t>(i % 5000);  break;                             // a few sorted runs
      case 2: ts = static_cast<int64_t>(i) + static_cast<int64_t>(rng() % 3) - 1; break;  // nearly sorted
      case 3: ts = static_cast<int64_t>(n - i); break;                                 // reversed
    }
    v[i] = {ts, static_cast<uint32_t>(i)};
  }
  return v;
}

TEST(ParallelSortTest, SameAsStdSortForAnyThreadCountAndShape) {
  for (int pattern = 0; pattern < 4; ++pattern) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{1000}, size_t{100000}}) {
      std::vector<Key> expected = Make(n, pattern, 7);
      std::sort(expected.begin(), expected.end(), Less);
      for (size_t threads : {1, 2, 3, 8}) {
        std::vector<Key> v = Make(n, pattern, 7);
        ParallelSort(&v, Less, threads);
        ASSERT_EQ(v.size(), expected.size());
        bool same = true;
        for (size_t i = 0; i < v.size() && same; ++i) same = v[i].index == expected[i].index;
        EXPECT_TRUE(same) << "pattern " << pattern << " n " << n << " threads " << threads;
      }
    }
  }
}

TEST(ParallelForTest, VisitsEveryIndexOnce) {
  for (size_t threads : {1, 2, 7}) {
    std::vector<std::atomic<int>> seen(1000);
    ParallelFor(seen.size(), threads, [&](size_t i) { seen[i].fetch_add(1); });
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << i;
  }
}

}  // namespace
}  // namespace aiprof
