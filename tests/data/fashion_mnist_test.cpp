// Reads the real Fashion-MNIST files where the system has them installed.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "data/dataset.hpp"

namespace tula::data {
namespace {

TEST(FashionMnistTest, LoadsTheInstalledSet) {
  const std::string dir = default_data_dir("fashion-mnist");
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " not installed";
  DatasetOptions options;
  options.name = "fashion-mnist";  // data_dir empty: the default directory
  const auto train = open_dataset(options, Split::kTrain);
  const auto test = open_dataset(options, Split::kTest);
  EXPECT_EQ(train->size(), 60000);
  EXPECT_EQ(test->size(), 10000);
  EXPECT_EQ(train->num_classes(), 10);
  EXPECT_EQ(train->shape().channels, 1);
  EXPECT_EQ(train->shape().height, 28);
  EXPECT_EQ(train->shape().width, 28);
  // The published statistics of the training images.
  ASSERT_EQ(train->channel_mean().size(), 1u);
  EXPECT_NEAR(train->channel_mean()[0], 0.2860, 0.0005);
  EXPECT_NEAR(train->channel_std()[0], 0.3530, 0.0005);
  std::vector<int64_t> first(600);
  for (int64_t i = 0; i < 600; ++i) first[i] = i * 100;
  const Batch batch = train->gather(first);
  EXPECT_EQ(batch.images.sizes(), (std::vector<int64_t>{600, 1, 28, 28}));
  EXPECT_GE(batch.labels.min().item<int64_t>(), 0);
  EXPECT_LE(batch.labels.max().item<int64_t>(), 9);
}

}  // namespace
}  // namespace tula::data
