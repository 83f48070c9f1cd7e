#include "common/gpu_mapping.hpp"

#include <gtest/gtest.h>

namespace tula::common {
namespace {

TEST(GpuMapping, CudaVisibleDevicesIsReadAsTheCudaRuntimeReadsIt) {
  EXPECT_EQ(visible_gpu_count(std::nullopt, 8), 8) << "unset: every GPU";
  EXPECT_EQ(visible_gpu_count(std::string("2,3"), 8), 2);
  EXPECT_EQ(visible_gpu_count(std::string(" 5 , 1 "), 8), 2);
  EXPECT_EQ(visible_gpu_count(std::string(""), 8), 0) << "an empty list hides them all";
  EXPECT_EQ(visible_gpu_count(std::string("-1"), 8), 0);
  EXPECT_EQ(visible_gpu_count(std::string("0,9,1"), 8), 1) << "up to the first index out of range";
  EXPECT_EQ(visible_gpu_count(std::string("0,x,1"), 8), 1);
  EXPECT_EQ(visible_gpu_count(std::string("GPU-b3838e5e-3200-8da9-dcd7-fc19354b66fd,1"), 2), 2);
  EXPECT_EQ(visible_gpu_count(std::string("0,1,2,3"), 2), 2) << "never more than the machine has";
  EXPECT_EQ(visible_gpu_count(std::nullopt, 0), 0);
}

TEST(GpuMapping, EachLocalRankOnItsOwnGpuOrSharedRoundRobin) {
  for (int rank = 0; rank < 4; ++rank) EXPECT_EQ(gpu_of_local_rank(rank, 4), rank);
  EXPECT_EQ(gpu_of_local_rank(2, 2), 0);
  EXPECT_EQ(gpu_of_local_rank(3, 2), 1);
  EXPECT_EQ(gpu_of_local_rank(5, 1), 0);
  EXPECT_THROW(gpu_of_local_rank(0, 0), std::invalid_argument);
  EXPECT_THROW(gpu_of_local_rank(-1, 2), std::invalid_argument);
}

}  // namespace
}  // namespace tula::common
