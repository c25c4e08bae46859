#include "src/base/huge_pages.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

constexpr uint64_t kBig = kHugePageInputBytes;

TEST(HugePages, RestartOnlyForLargeInputsWhereTheKernelAllows) {
  EXPECT_TRUE(WantHugePageRestart("always [madvise] never", nullptr, nullptr, kBig));
  EXPECT_TRUE(WantHugePageRestart("[always] madvise never", nullptr, nullptr, kBig + 1));
  EXPECT_FALSE(WantHugePageRestart("always [madvise] never", nullptr, nullptr, kBig - 1));
  EXPECT_FALSE(WantHugePageRestart("always madvise [never]", nullptr, nullptr, kBig));
  EXPECT_FALSE(WantHugePageRestart("", nullptr, nullptr, kBig));  // no THP knob (not Linux, no sysfs)
}

TEST(HugePages, UserChoicesWin) {
  EXPECT_FALSE(WantHugePageRestart("always [madvise] never", "0", nullptr, kBig));
  EXPECT_TRUE(WantHugePageRestart("always [madvise] never", "1", nullptr, kBig));
  // The user's own tunables already decide: never restart (no loop either).
  EXPECT_FALSE(WantHugePageRestart("always [madvise] never", nullptr, "glibc.malloc.hugetlb=0", kBig));
  EXPECT_FALSE(WantHugePageRestart("always [madvise] never", nullptr, "glibc.malloc.hugetlb=1", kBig));
  EXPECT_TRUE(WantHugePageRestart("always [madvise] never", nullptr, "glibc.malloc.arena_max=2", kBig));
}

TEST(HugePages, TunablesKeepTheUsersOwn) {
  EXPECT_EQ(TunablesWithHugePages(nullptr), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(TunablesWithHugePages(""), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(TunablesWithHugePages("glibc.malloc.arena_max=2"), "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
}

}  // namespace
}  // namespace aiprof
