// A range said and checked one way: its words name both ends and whether
// each is included, and the value quoted reads back to the one given.
#include "common/number_range.hpp"

#include <gtest/gtest.h>

namespace tula::common {
namespace {

TEST(NumberRange, SaysEachEndAndChecksIt) {
  EXPECT_EQ(describe_range(kTargetAccuracy), "a number from 0 to below 1");
  EXPECT_EQ(describe_range({0, 100, true, false}), "a number above 0 and at most 100");
  EXPECT_EQ(describe_range({0, 10000}), "a number from 0 to 10000");
  EXPECT_TRUE(in_range(kTargetAccuracy, 0));
  EXPECT_TRUE(in_range(kTargetAccuracy, 0.999));
  EXPECT_FALSE(in_range(kTargetAccuracy, 1));
  EXPECT_FALSE(in_range({0, 100, true, false}, 0));
  EXPECT_EQ(range_refusal(kTargetAccuracy, 1.5), "must be a number from 0 to below 1 (got 1.5)");
  EXPECT_EQ(range_refusal(kTargetAccuracy, 0.5), std::nullopt);
}

TEST(NumberRange, AnExactNumberReadsBackToTheSameDouble) {
  EXPECT_EQ(exact_number(0.1), "0.1");
  EXPECT_EQ(exact_number(100000), "100000");
  for (double v : {1.0 / 3, 0.123456789012345, 5e-4, 1e-300, 2.5e15}) {
    EXPECT_EQ(std::stod(exact_number(v)), v) << exact_number(v);
  }
}

}  // namespace
}  // namespace tula::common
