// The numbers, times and progress modes every part prints through.
#include "common/text.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace tula::common {
namespace {

TEST(Text, PercentsRoundAndCarryTheirSign) {
  EXPECT_EQ(percent(0.1234), "12.3%");
  EXPECT_EQ(percent(0.5, 2), "50.00%");
  EXPECT_EQ(signed_percent(0.1234), "+12.3%");
  EXPECT_EQ(signed_percent(-0.05), "-5.0%");
}

TEST(Text, DurationsReadLikeAClockAndNonsenseIsAQuestionMark) {
  EXPECT_EQ(format_duration(42.4), "42s");
  EXPECT_EQ(format_duration(185), "3m05s");
  EXPECT_EQ(format_duration(3720), "1h02m");
  EXPECT_EQ(format_duration(-1), "?");
  EXPECT_EQ(format_duration(NAN), "?");
}

TEST(Text, TimesAreUtcIso8601) {
  EXPECT_EQ(iso_utc(0), "1970-01-01T00:00:00Z");
  EXPECT_EQ(iso_utc(1795463028.5), "2026-11-23T19:43:48Z");
  EXPECT_GT(unix_now(), 1.7e9);
}

TEST(Text, ProgressModesAndAutoFollowsTheTerminal) {
  EXPECT_EQ(progress_mode("auto", true), ProgressMode::Bar);
  EXPECT_EQ(progress_mode("auto", false), ProgressMode::Lines);
  EXPECT_EQ(progress_mode("bar", false), ProgressMode::Bar);
  EXPECT_EQ(progress_mode("none", true), ProgressMode::None);
  try {
    progress_mode("fancy", true);
    FAIL() << "accepted 'fancy'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'fancy'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tula::common
