#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/dataset.hpp"
#include "data/test_files.hpp"

namespace tula::data {
namespace {

using testing::Bytes;
using testing::TempDir;

std::shared_ptr<Dataset> open(const std::string& name, const std::string& dir, Split split) {
  DatasetOptions options;
  options.name = name;
  options.data_dir = dir;
  return open_dataset(options, split);
}

// CIFAR-10 with two records per training file (label = 2 * file + record)
// and three test records; the image seed is the sample's overall position.
void write_cifar10(const std::filesystem::path& dir) {
  for (int f = 0; f < 5; ++f) {
    Bytes bytes;
    for (int r = 0; r < 2; ++r) {
      testing::append(bytes, testing::cifar_record({static_cast<uint8_t>(2 * f + r)}, 2 * f + r));
    }
    testing::write_file((dir / ("data_batch_" + std::to_string(f + 1) + ".bin")).string(), bytes);
  }
  Bytes test;
  for (int r = 0; r < 3; ++r) testing::append(test, testing::cifar_record({7}, 100 + r));
  testing::write_file((dir / "test_batch.bin").string(), test);
}

void expect_pixels(const Batch& batch, int64_t sample, int64_t seed) {
  const auto image = batch.images[sample];
  ASSERT_EQ(image.sizes(), (std::vector<int64_t>{3, 32, 32}));
  // Stored channel by channel, row by row: byte j is pixel (j / 1024, j / 32 % 32, j % 32).
  for (const int64_t j : {0, 1, 31, 32, 1023, 1024, 2047, 2048, 3071}) {
    const float expected = static_cast<float>((seed * 11 + j) % 251) / 255.0f;
    EXPECT_FLOAT_EQ(image[j / 1024][j / 32 % 32][j % 32].item<float>(), expected) << "byte " << j;
  }
}

TEST(CifarDatasetTest, Cifar10ReadsAllBatchesInOrder) {
  TempDir dir;
  write_cifar10(dir.path());
  const auto train = open("cifar10", dir.str(), Split::kTrain);
  EXPECT_EQ(train->size(), 10);
  EXPECT_EQ(train->num_classes(), 10);
  EXPECT_EQ(train->shape().channels, 3);
  const Batch batch = train->gather({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_TRUE(batch.labels.equal(torch::arange(10, torch::kInt64)));
  expect_pixels(batch, 0, 0);
  expect_pixels(batch, 9, 9);

  const auto test = open("cifar-10", dir.str(), Split::kTest);
  EXPECT_EQ(test->size(), 3);
  expect_pixels(test->gather({2}), 0, 102);
}

TEST(CifarDatasetTest, Cifar10FoundInArchiveSubfolder) {
  TempDir dir;
  write_cifar10(dir.path() / "cifar-10-batches-bin");
  EXPECT_EQ(open("cifar10", dir.str(), Split::kTrain)->size(), 10);
}

TEST(CifarDatasetTest, Cifar100UsesFineLabels) {
  TempDir dir;
  Bytes train;
  testing::append(train, testing::cifar_record({19, 99}, 0));
  testing::append(train, testing::cifar_record({4, 42}, 1));
  testing::write_file(dir.file("cifar-100-binary/train.bin"), train);
  testing::write_file(dir.file("cifar-100-binary/test.bin"), testing::cifar_record({0, 5}, 2));
  const auto set = open("cifar100", dir.str(), Split::kTrain);
  EXPECT_EQ(set->name(), "cifar100");
  EXPECT_EQ(set->size(), 2);
  EXPECT_EQ(set->num_classes(), 100);
  const Batch batch = set->gather({1, 0});
  EXPECT_TRUE(batch.labels.equal(torch::tensor({42, 99}, torch::kInt64)));
  expect_pixels(batch, 0, 1);
  EXPECT_EQ(open("cifar100", dir.str(), Split::kTest)->gather({0}).labels.item<int64_t>(), 5);
}

TEST(CifarDatasetTest, ChannelStatisticsArePerChannel) {
  TempDir dir;
  write_cifar10(dir.path());
  const auto set = open("cifar10", dir.str(), Split::kTrain);
  const auto images = set->gather({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}).images.to(torch::kFloat64);
  const auto mean = set->channel_mean();
  const auto std = set->channel_std();
  ASSERT_EQ(mean.size(), 3u);
  ASSERT_EQ(std.size(), 3u);
  for (int64_t c = 0; c < 3; ++c) {
    const auto channel = images.select(1, c);
    EXPECT_NEAR(mean[c], channel.mean().item<double>(), 1e-7);  // gather rounds to float
    EXPECT_NEAR(std[c], channel.std(/*unbiased=*/false).item<double>(),
                1e-7);  // gather rounds to float
  }
}

TEST(CifarDatasetTest, MissingFilesAreNamed) {
  TempDir dir;
  testing::expect_error([&] { open("cifar10", dir.str(), Split::kTrain); },
                        {dir.file("data_batch_1.bin"), "missing"});
  write_cifar10(dir.path());
  std::filesystem::remove(dir.file("data_batch_3.bin"));
  testing::expect_error([&] { open("cifar10", dir.str(), Split::kTrain); },
                        {dir.file("data_batch_3.bin"), "missing"});
  testing::expect_error([&] { open("cifar100", dir.str(), Split::kTest); },
                        {dir.file("test.bin"), "missing"});
}

TEST(CifarDatasetTest, PartialRecordIsNamed) {
  TempDir dir;
  write_cifar10(dir.path());
  Bytes bytes = testing::cifar_record({1}, 0);
  bytes.resize(bytes.size() + 100, 0);
  testing::write_file(dir.file("data_batch_2.bin"), bytes);
  testing::expect_error([&] { open("cifar10", dir.str(), Split::kTrain); },
                        {dir.file("data_batch_2.bin"), "3173", "multiple of the 3073-byte record"});
  testing::write_file(dir.file("data_batch_2.bin"), {});
  testing::expect_error([&] { open("cifar10", dir.str(), Split::kTrain); },
                        {dir.file("data_batch_2.bin"), "empty"});
}

TEST(CifarDatasetTest, LabelsOutOfRangeAreNamed) {
  TempDir dir;
  write_cifar10(dir.path());
  Bytes test;
  testing::append(test, testing::cifar_record({3}, 0));
  testing::append(test, testing::cifar_record({10}, 1));
  testing::write_file(dir.file("test_batch.bin"), test);
  testing::expect_error([&] { open("cifar10", dir.str(), Split::kTest); },
                        {dir.file("test_batch.bin"), "label 10", "record 1", "out of range"});

  testing::write_file(dir.file("train.bin"), testing::cifar_record({2, 100}, 0));
  testing::expect_error([&] { open("cifar100", dir.str(), Split::kTrain); },
                        {dir.file("train.bin"), "label 100", "out of range [0, 100)"});
  testing::write_file(dir.file("train.bin"), testing::cifar_record({20, 3}, 0));
  testing::expect_error([&] { open("cifar100", dir.str(), Split::kTrain); },
                        {dir.file("train.bin"), "coarse label 20"});
}

}  // namespace
}  // namespace tula::data
