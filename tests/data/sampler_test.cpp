#include "data/sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

namespace tula::data {
namespace {

SamplerOptions options(int64_t size, int rank, int world, uint64_t seed = 0,
                       bool drop_last = false) {
  SamplerOptions o;
  o.dataset_size = size;
  o.rank = rank;
  o.world_size = world;
  o.seed = seed;
  o.drop_last = drop_last;
  return o;
}

// The global order the ranks' shards interleave into: position
// rank + k * world holds shard[rank][k].
std::vector<int64_t> interleave(int64_t size, int world, int64_t epoch, uint64_t seed,
                                bool drop_last = false) {
  std::vector<std::vector<int64_t>> shards;
  for (int r = 0; r < world; ++r) {
    shards.push_back(DistributedSampler(options(size, r, world, seed, drop_last)).indices(epoch));
  }
  std::vector<int64_t> order;
  for (size_t k = 0; k < shards[0].size(); ++k) {
    for (int r = 0; r < world; ++r) order.push_back(shards[r][k]);
  }
  return order;
}

TEST(DistributedSamplerTest, ShardsAreDisjointAndCoverTheSet) {
  const std::vector<int64_t> order = interleave(120, 4, 0, 7);
  ASSERT_EQ(order.size(), 120u);
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> expected(120);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
  EXPECT_NE(order, expected);  // shuffled
  EXPECT_EQ(DistributedSampler(options(120, 3, 4)).per_rank(), 30);
}

TEST(DistributedSamplerTest, PadsByWrappingAsPyTorchDoes) {
  // 10 samples on 4 ranks: 3 each, the last two positions repeat the first two.
  const std::vector<int64_t> order = interleave(10, 4, 2, 5);
  ASSERT_EQ(order.size(), 12u);
  EXPECT_EQ(order[10], order[0]);
  EXPECT_EQ(order[11], order[1]);
  EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), 10u);
  EXPECT_EQ(DistributedSampler(options(10, 0, 4)).per_rank(), 3);

  // Fewer samples than ranks: wraps more than once.
  const std::vector<int64_t> tiny = interleave(2, 5, 0, 0);
  ASSERT_EQ(tiny.size(), 5u);
  EXPECT_EQ(tiny[2], tiny[0]);
  EXPECT_EQ(tiny[4], tiny[0]);
  EXPECT_EQ(tiny[3], tiny[1]);
}

TEST(DistributedSamplerTest, DropLastDropsTheTail) {
  EXPECT_EQ(DistributedSampler(options(10, 0, 4, 0, true)).per_rank(), 2);
  const std::vector<int64_t> order = interleave(10, 4, 1, 3, true);
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), 8u);
  // The same permutation as without drop_last, cut short.
  const std::vector<int64_t> padded = interleave(10, 4, 1, 3, false);
  EXPECT_TRUE(std::equal(order.begin(), order.end(), padded.begin()));
}

TEST(DistributedSamplerTest, EpochsReshuffleDeterministically) {
  const DistributedSampler a(options(1000, 1, 3, 42));
  const DistributedSampler b(options(1000, 1, 3, 42));
  EXPECT_EQ(a.indices(0), b.indices(0));
  EXPECT_EQ(a.indices(5), b.indices(5));
  EXPECT_EQ(a.indices(0), a.indices(0));
  EXPECT_NE(a.indices(0), a.indices(1));
  EXPECT_NE(a.indices(0), DistributedSampler(options(1000, 1, 3, 43)).indices(0));
  // Each epoch still partitions the set.
  for (const int64_t epoch : {0, 1, 2}) {
    const std::vector<int64_t> order = interleave(999, 3, epoch, 42);
    EXPECT_EQ(std::set<int64_t>(order.begin(), order.end()).size(), 999u);
  }
}

TEST(DistributedSamplerTest, WithoutShuffleRanksStride) {
  SamplerOptions o = options(7, 1, 3);
  o.shuffle = false;
  EXPECT_EQ(DistributedSampler(o).indices(0), (std::vector<int64_t>{1, 4, 0}));
  EXPECT_EQ(DistributedSampler(o).indices(9), (std::vector<int64_t>{1, 4, 0}));
}

TEST(DistributedSamplerTest, EdgeCasesAndBadOptions) {
  EXPECT_TRUE(DistributedSampler(options(0, 0, 2)).indices(0).empty());
  EXPECT_EQ(DistributedSampler(options(1, 0, 1)).indices(3), (std::vector<int64_t>{0}));
  EXPECT_THROW(DistributedSampler(options(10, 2, 2)), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(options(10, -1, 2)), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(options(10, 0, 0)), std::invalid_argument);
  EXPECT_THROW(DistributedSampler(options(-1, 0, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace tula::data
