#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/dataset.hpp"
#include "data/test_files.hpp"

namespace tula::data {
namespace {

using testing::Bytes;
using testing::TempDir;

std::shared_ptr<Dataset> open(const std::string& dir, Split split,
                              const std::string& name = "mnist") {
  DatasetOptions options;
  options.name = name;
  options.data_dir = dir;
  return open_dataset(options, split);
}

// A small valid set: 5 train and 2 test images of 4x3.
void write_set(const TempDir& dir, bool gz) {
  auto put = [&](const std::string& name, const Bytes& bytes) {
    if (gz) {
      testing::write_file(dir.file(name + ".gz"), testing::gzip(bytes));
    } else {
      testing::write_file(dir.file(name), bytes);
    }
  };
  put("train-images-idx3-ubyte", testing::idx_images(5, 4, 3));
  put("train-labels-idx1-ubyte", testing::idx_labels({3, 1, 4, 1, 5}));
  put("t10k-images-idx3-ubyte", testing::idx_images(2, 4, 3));
  put("t10k-labels-idx1-ubyte", testing::idx_labels({9, 0}));
}

void expect_images_match(const Batch& batch, const std::vector<int64_t>& indices) {
  ASSERT_EQ(batch.images.sizes(),
            (std::vector<int64_t>{static_cast<int64_t>(indices.size()), 1, 4, 3}));
  ASSERT_EQ(batch.images.scalar_type(), torch::kFloat32);
  const auto flat = batch.images.reshape({batch.images.size(0), -1});
  for (size_t s = 0; s < indices.size(); ++s) {
    for (int64_t j = 0; j < 12; ++j) {
      EXPECT_FLOAT_EQ(flat[s][j].item<float>(), testing::idx_pixel(indices[s], j) / 255.0f);
    }
  }
}

class IdxFormatTest : public ::testing::TestWithParam<bool> {};

TEST_P(IdxFormatTest, ReadsImagesAndLabels) {
  TempDir dir;
  write_set(dir, GetParam());
  const auto train = open(dir.str(), Split::kTrain, "fashion-mnist");
  EXPECT_EQ(train->name(), "fashion-mnist");
  EXPECT_EQ(train->size(), 5);
  EXPECT_EQ(train->num_classes(), 10);
  EXPECT_EQ(train->shape().channels, 1);
  EXPECT_EQ(train->shape().height, 4);
  EXPECT_EQ(train->shape().width, 3);
  const Batch batch = train->gather({4, 0, 2});
  expect_images_match(batch, {4, 0, 2});
  EXPECT_TRUE(batch.labels.equal(torch::tensor({5, 3, 4}, torch::kInt64)));

  const auto test = open(dir.str(), Split::kTest);
  EXPECT_EQ(test->size(), 2);
  EXPECT_TRUE(test->gather({0, 1}).labels.equal(torch::tensor({9, 0}, torch::kInt64)));
}

INSTANTIATE_TEST_SUITE_P(PlainAndGzip, IdxFormatTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Gzip" : "Plain"; });

TEST(IdxDatasetTest, ChannelStatisticsMatchTheData) {
  TempDir dir;
  write_set(dir, false);
  const auto train = open(dir.str(), Split::kTrain);
  const auto all = train->gather({0, 1, 2, 3, 4}).images.to(torch::kFloat64);
  ASSERT_EQ(train->channel_mean().size(), 1u);
  EXPECT_NEAR(train->channel_mean()[0], all.mean().item<double>(), 1e-7);  // gather rounds to float
  EXPECT_NEAR(train->channel_std()[0], all.std(/*unbiased=*/false).item<double>(),
              1e-7);  // gather rounds to float
}

TEST(IdxDatasetTest, GatherRejectsBadIndices) {
  TempDir dir;
  write_set(dir, false);
  const auto train = open(dir.str(), Split::kTrain);
  EXPECT_THROW(train->gather({5}), std::out_of_range);
  EXPECT_THROW(train->gather({-1}), std::out_of_range);
  EXPECT_EQ(train->gather({}).images.size(0), 0);
}

TEST(IdxDatasetTest, MissingFileIsNamed) {
  TempDir dir;
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte"), "missing"});
  write_set(dir, false);
  std::filesystem::remove(dir.file("t10k-labels-idx1-ubyte"));
  testing::expect_error([&] { open(dir.str(), Split::kTest); },
                        {dir.file("t10k-labels-idx1-ubyte"), "missing"});
}

TEST(IdxDatasetTest, TruncatedImagesAreNamed) {
  TempDir dir;
  write_set(dir, false);
  Bytes images = testing::idx_images(5, 4, 3);
  images.resize(images.size() - 7);
  testing::write_file(dir.file("train-images-idx3-ubyte"), images);
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte"), "truncated"});
  images.resize(10);  // inside the header
  testing::write_file(dir.file("train-images-idx3-ubyte"), images);
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte"), "truncated"});
}

TEST(IdxDatasetTest, TruncatedGzipIsNamed) {
  TempDir dir;
  write_set(dir, true);
  // Large enough that cutting the compressed stream loses data.
  Bytes gz = testing::gzip(testing::idx_images(200, 28, 28));
  testing::write_file(dir.file("train-images-idx3-ubyte.gz"),
                      Bytes(gz.begin(), gz.begin() + gz.size() / 2));
  testing::write_file(dir.file("train-labels-idx1-ubyte.gz"),
                      testing::gzip(testing::idx_labels(std::vector<uint8_t>(200, 1))));
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte.gz")});
}

TEST(IdxDatasetTest, GzipWithoutTrailerIsNamed) {
  TempDir dir;
  write_set(dir, true);
  Bytes gz = testing::gzip(testing::idx_labels({3, 1, 4, 1, 5}));
  gz.resize(gz.size() - 8);  // the CRC-32 and length trailer
  testing::write_file(dir.file("train-labels-idx1-ubyte.gz"), gz);
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-labels-idx1-ubyte.gz"), "truncated"});
}

TEST(IdxDatasetTest, CorruptGzipChecksumIsNamed) {
  TempDir dir;
  write_set(dir, true);
  Bytes gz = testing::gzip(testing::idx_labels({3, 1, 4, 1, 5}));
  gz[gz.size() - 6] ^= 0xff;  // inside the CRC-32 trailer
  testing::write_file(dir.file("train-labels-idx1-ubyte.gz"), gz);
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-labels-idx1-ubyte.gz"), "corrupt"});
}

TEST(IdxDatasetTest, BadMagicIsNamed) {
  TempDir dir;
  write_set(dir, false);
  // A labels file where an images file belongs.
  testing::write_file(dir.file("train-images-idx3-ubyte"), testing::idx_labels({1, 2}));
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte"), "magic", "0x00000801"});
}

TEST(IdxDatasetTest, TrailingDataIsNamed) {
  TempDir dir;
  write_set(dir, false);
  Bytes labels = testing::idx_labels({3, 1, 4, 1, 5});
  labels.push_back(0);
  testing::write_file(dir.file("train-labels-idx1-ubyte"), labels);
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-labels-idx1-ubyte"), "trailing"});
}

TEST(IdxDatasetTest, ZeroDimensionIsNamed) {
  TempDir dir;
  write_set(dir, false);
  testing::write_file(dir.file("train-images-idx3-ubyte"), testing::idx_images(5, 0, 3));
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte"), "zero"});
}

TEST(IdxDatasetTest, CountMismatchNamesBothFiles) {
  TempDir dir;
  write_set(dir, false);
  testing::write_file(dir.file("train-labels-idx1-ubyte"), testing::idx_labels({1, 2, 3}));
  testing::expect_error([&] { open(dir.str(), Split::kTrain); },
                        {dir.file("train-images-idx3-ubyte"), dir.file("train-labels-idx1-ubyte"),
                         "5 images", "3 labels"});
}

TEST(IdxDatasetTest, LabelOutOfRangeIsNamed) {
  TempDir dir;
  write_set(dir, false);
  testing::write_file(dir.file("train-labels-idx1-ubyte"), testing::idx_labels({3, 1, 10, 1, 5}));
  testing::expect_error(
      [&] { open(dir.str(), Split::kTrain); },
      {dir.file("train-labels-idx1-ubyte"), "label 10", "sample 2", "out of range"});
}

}  // namespace
}  // namespace tula::data
