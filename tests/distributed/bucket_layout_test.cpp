#include "distributed/bucket_layout.hpp"

#include <gtest/gtest.h>

namespace tula::distributed {
namespace {

// small_cnn's parameters in registration order (conv1, conv2, fc1, fc2; weight
// then bias), fp32.
std::vector<ParameterSlot> small_cnn() {
  std::vector<ParameterSlot> slots;
  for (int64_t numel : {288, 32, 18432, 64, 401408, 128, 1280, 10}) slots.push_back({4 * numel});
  return slots;
}

// Backward fills fc2 and fc1 first: fc1's weight takes the first bucket past
// its 1 MiB cap (a parameter never splits), and the convolutions, whose
// gradients come last, make a bucket of 75 KB.
TEST(BucketLayout, ReverseOrderWholeParametersFirstBucketSmall) {
  const auto layout = bucket_layout(small_cnn(), {});
  ASSERT_EQ(layout.size(), 2u);
  EXPECT_EQ(layout[0], (std::vector<int64_t>{7, 6, 5, 4}));
  EXPECT_EQ(layout[1], (std::vector<int64_t>{3, 2, 1, 0}));
  EXPECT_EQ(bucket_bytes(small_cnn(), {}), (std::vector<int64_t>{4 * (10 + 1280 + 128 + 401408), 4 * (64 + 18432 + 32 + 288)}));
}

TEST(BucketLayout, AnotherKindOpensABucket) {
  std::vector<ParameterSlot> slots = {{100, 0}, {100, 1}, {100, 1}};
  EXPECT_EQ(bucket_bytes(slots, {}), (std::vector<int64_t>{200, 100}));
  ReducerOptions tiny;
  tiny.first_bucket_bytes = 100;
  tiny.bucket_bytes = 150;
  const std::vector<ParameterSlot> same(5, ParameterSlot{100, 0});
  EXPECT_EQ(bucket_bytes(same, tiny), (std::vector<int64_t>{100, 200, 200}));
}

}  // namespace
}  // namespace tula::distributed
