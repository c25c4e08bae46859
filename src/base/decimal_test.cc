#include "src/base/decimal.h"

#include <gtest/gtest.h>

namespace aiprof {
namespace {

TEST(DecimalTest, KeepsNanosecondsPastDoublePrecision) {
  // 1736408883704643.212 µs is not representable as a double.
  EXPECT_EQ(ParseMicrosToNanos("1736408883704643.212"), 1736408883704643212);
  EXPECT_EQ(ParseMicrosToNanos("1736408883704643"), 1736408883704643000);
}

TEST(DecimalTest, FractionalDigitsBeyondNanosecondsRound) {
  EXPECT_EQ(ParseMicrosToNanos("25.118000000000052"), 25118);
  EXPECT_EQ(ParseMicrosToNanos("72705.29699999999"), 72705297);
  EXPECT_EQ(ParseMicrosToNanos("0.0005"), 1);   // half rounds away from zero
  EXPECT_EQ(ParseMicrosToNanos("0.0004999"), 0);
  EXPECT_EQ(ParseMicrosToNanos("-3.5005"), -3501);
}

TEST(DecimalTest, Exponents) {
  EXPECT_EQ(ParseMicrosToNanos("1.5e3"), 1500000);
  EXPECT_EQ(ParseMicrosToNanos("1E-3"), 1);
  EXPECT_EQ(ParseMicrosToNanos("2e+2"), 200000);
  EXPECT_EQ(ParseMicrosToNanos("0e400"), 0);
}

TEST(DecimalTest, RejectsMalformedAndOverflow) {
  EXPECT_EQ(ParseMicrosToNanos(""), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("-"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("1.2.3"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("12a"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos(" 12"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("1e"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.807"), INT64_MAX);
  EXPECT_EQ(ParseMicrosToNanos("9223372036854775.808"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseMicrosToNanos("1e99999"), std::nullopt);
}

TEST(DecimalTest, ParseInt64) {
  EXPECT_EQ(ParseInt64("1711964646000000000"), 1711964646000000000);
  EXPECT_EQ(ParseInt64("-7"), -7);
  EXPECT_EQ(ParseInt64("7.0"), std::nullopt);
  EXPECT_EQ(ParseInt64(""), std::nullopt);
}

}  // namespace
}  // namespace aiprof
