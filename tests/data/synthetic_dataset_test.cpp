#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/dataset.hpp"

namespace tula::data {
namespace {

DatasetOptions synthetic(uint64_t seed) {
  DatasetOptions options;
  options.name = "synthetic";
  options.synthetic_size = 1000;
  options.synthetic_shape = {3, 17, 9};
  options.synthetic_classes = 7;
  options.seed = seed;
  return options;
}

TEST(SyntheticDatasetTest, HasTheRequestedShape) {
  const auto set = open_dataset(synthetic(1), Split::kTrain);
  EXPECT_EQ(set->name(), "synthetic");
  EXPECT_EQ(set->size(), 1000);
  EXPECT_EQ(set->num_classes(), 7);
  EXPECT_EQ(set->shape().height, 17);
  const Batch batch = set->gather({0, 999, 5});
  EXPECT_EQ(batch.images.sizes(), (std::vector<int64_t>{3, 3, 17, 9}));
  EXPECT_EQ(batch.images.scalar_type(), torch::kFloat32);
  EXPECT_EQ(batch.labels.scalar_type(), torch::kInt64);
  EXPECT_GE(batch.images.min().item<float>(), 0.0f);
  EXPECT_LE(batch.images.max().item<float>(), 1.0f);
  EXPECT_THROW(set->gather({1000}), std::out_of_range);
}

TEST(SyntheticDatasetTest, SamplesDependOnlyOnSeedSplitAndIndex) {
  const auto a = open_dataset(synthetic(1), Split::kTrain);
  const auto b = open_dataset(synthetic(1), Split::kTrain);
  const Batch whole = a->gather({3, 8, 3});
  const Batch single = b->gather({8});
  EXPECT_TRUE(whole.images[1].equal(single.images[0]));
  EXPECT_TRUE(whole.images[0].equal(whole.images[2]));
  EXPECT_EQ(whole.labels[1].item<int64_t>(), single.labels[0].item<int64_t>());
  EXPECT_FALSE(whole.images[0].equal(whole.images[1]));

  const auto other_seed = open_dataset(synthetic(2), Split::kTrain);
  EXPECT_FALSE(other_seed->gather({8}).images.equal(single.images));
  const auto test_split = open_dataset(synthetic(1), Split::kTest);
  EXPECT_FALSE(test_split->gather({8}).images.equal(single.images));
}

TEST(SyntheticDatasetTest, StatisticsMatchTheData) {
  const auto set = open_dataset(synthetic(3), Split::kTrain);
  std::vector<int64_t> all(1000);
  for (int64_t i = 0; i < 1000; ++i) all[i] = i;
  const Batch batch = set->gather(all);
  const auto mean = set->channel_mean();
  const auto std = set->channel_std();
  ASSERT_EQ(mean.size(), 3u);
  for (int64_t c = 0; c < 3; ++c) {
    const auto channel = batch.images.select(1, c).to(torch::kFloat64);
    EXPECT_NEAR(mean[c], channel.mean().item<double>(), 0.005);
    EXPECT_NEAR(std[c], channel.std().item<double>(), 0.005);
  }
  // Every class occurs.
  EXPECT_EQ(std::get<0>(torch::_unique(batch.labels)).numel(), 7);
}

TEST(OpenDatasetTest, NamesAndDirectories) {
  EXPECT_EQ(default_data_dir("fashion-mnist"), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(default_data_dir("Fashion_MNIST"), "/usr/share/datasets/fashion-mnist");
  DatasetOptions options;
  options.name = "imagenet";
  EXPECT_THROW(open_dataset(options, Split::kTrain), std::invalid_argument);
  EXPECT_THROW(default_data_dir("imagenet"), std::invalid_argument);
  options = synthetic(0);
  options.synthetic_shape = {0, 4, 4};
  EXPECT_THROW(open_dataset(options, Split::kTrain), std::invalid_argument);
}

}  // namespace
}  // namespace tula::data
