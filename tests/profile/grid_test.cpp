// The settings a profile measures at, and the lists users type.
#include <gtest/gtest.h>

#include "profile/grid.hpp"

namespace tula::profile {
namespace {

TEST(Grid, GeometricGridEndsAtTheLargestSetting) {
  EXPECT_EQ(geometric_grid(1, 16, 2), (std::vector<int64_t>{1, 2, 4, 8, 16}));
  EXPECT_EQ(geometric_grid(4, 100, 4), (std::vector<int64_t>{4, 16, 64, 100}));
  EXPECT_EQ(geometric_grid(5, 5, 2), (std::vector<int64_t>{5}));
  EXPECT_THROW(geometric_grid(0, 5, 2), std::invalid_argument);
  EXPECT_THROW(geometric_grid(4, 2, 2), std::invalid_argument);
  EXPECT_THROW(geometric_grid(1, 8, 1), std::invalid_argument);
}

TEST(Grid, MessageSizesSpanFourKiBToTheGradient) {
  const auto sizes = message_sizes(4 * 1000003, 16);
  ASSERT_GE(sizes.size(), 3u);
  EXPECT_EQ(sizes.front(), 4096);
  EXPECT_EQ(sizes.back(), 4 * 1000003);
  for (size_t i = 1; i < sizes.size(); ++i) EXPECT_GT(sizes[i], sizes[i - 1]);
  for (const auto b : sizes) EXPECT_EQ(b % 4, 0) << "whole floats";
  // 1 MiB would sit just below a 1.03 MiB gradient: the gradient size replaces it.
  EXPECT_EQ(message_sizes(1078888, 16), (std::vector<int64_t>{4096, 65536, 1078888}));
  EXPECT_EQ(message_sizes(1078888, 8), (std::vector<int64_t>{4096, 32768, 262144, 1078888}));
  // A small model's link is measured past its gradient if need be, with three messages or more and up to
  // 1 MiB at least: the fit needs three, and a bandwidth it can tell from the latency's noise.
  EXPECT_EQ(message_sizes(100, 4), (std::vector<int64_t>{4096, 16384, 65536, 262144, 1048576}));
  EXPECT_EQ(message_sizes(15360, 16), (std::vector<int64_t>{4096, 15360, 245760, 3932160}));
}

TEST(Grid, ParsesListsAndShapes) {
  EXPECT_EQ(parse_int_list("32,8,16,8", "--batch-sizes"), (std::vector<int64_t>{8, 16, 32}));
  EXPECT_THROW(parse_int_list("8,x,16", "--batch-sizes"), std::invalid_argument);
  EXPECT_THROW(parse_int_list("8,0", "--batch-sizes"), std::invalid_argument);
  EXPECT_THROW(parse_int_list("8,16k", "--batch-sizes"), std::invalid_argument);
  try {
    parse_int_list("8,-2", "--workers");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--workers"), std::string::npos);
  }
  EXPECT_EQ(parse_shape("1x28x28", "--input-shape"), (std::vector<int64_t>{1, 28, 28}));
  for (const auto* bad : {"1x28", "1x28x28x3", "0x28x28", "ax28x28", "1x28x", "1xx28"}) {
    EXPECT_THROW(parse_shape(bad, "--input-shape"), std::invalid_argument) << bad;
  }
}

}  // namespace
}  // namespace tula::profile
