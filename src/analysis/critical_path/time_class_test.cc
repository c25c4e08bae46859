#include "src/analysis/critical_path/time_class.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

// Every gap cause has an idle path class of its own, named alike, so the
// breakdown and the critical path say the same of one idle.
TEST(TimeClassTest, EachGapCauseHasItsIdleClass) {
  EXPECT_EQ(IdleClassOf(GapCause::kDataLoading), PathClass::kIdleDataLoading);
  EXPECT_EQ(IdleClassOf(GapCause::kSync), PathClass::kIdleSync);
  EXPECT_EQ(IdleClassOf(GapCause::kHostBound), PathClass::kIdleHostBound);
  EXPECT_EQ(IdleClassOf(GapCause::kOther), PathClass::kIdleOther);
  EXPECT_EQ(IdleClassOf(GapCause::kStartup), PathClass::kIdleStartup);
  for (size_t c = 0; c < kGapCauseCount; ++c) {
    const GapCause cause = static_cast<GapCause>(c);
    const PathClass idle = IdleClassOf(cause);
    EXPECT_TRUE(IsIdleClass(idle)) << GapCauseName(cause);
    EXPECT_FALSE(IsDeviceClass(idle)) << GapCauseName(cause);
  }
  EXPECT_STREQ(PathClassName(PathClass::kIdleStartup), "idle_startup");
  EXPECT_EQ(static_cast<size_t>(PathClass::kIdleStartup), kPathClassCount - 1);
}

}  // namespace
}  // namespace aiprof
