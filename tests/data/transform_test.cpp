#include "data/transform.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <set>

namespace tula::data {
namespace {

namespace F = torch::nn::functional;

// Distinct positive values everywhere, so a shifted or flipped image never
// equals the original by accident and zero padding is recognisable.
Batch distinct_batch(int64_t n, int64_t channels, int64_t height, int64_t width) {
  Batch batch;
  batch.images = (torch::arange(n * channels * height * width, torch::kFloat32) + 1)
                     .reshape({n, channels, height, width}) /
                 (n * channels * height * width);
  batch.labels = torch::arange(n, torch::kInt64);
  return batch;
}

TransformOptions augment(int64_t padding, bool flip) {
  TransformOptions o;
  o.train = true;
  o.crop_padding = padding;
  o.horizontal_flip = flip;
  return o;
}

// A batch of its own: normalization writes into the images it is given.
Batch fresh(const Batch& batch) { return {batch.images.clone(), batch.labels}; }

TEST(TransformTest, NormalizesPerChannel) {
  {
    const Batch batch = distinct_batch(2, 1, 3, 3);
    const auto before = batch.images.clone();
    TransformOptions o;
    o.mean = {0.5};
    o.std = {0.5};
    apply_transform(batch, o, 0);
    EXPECT_FALSE(torch::equal(batch.images, before)) << "normalized in place, as documented";
  }
  const Batch batch = distinct_batch(4, 3, 5, 6);
  TransformOptions o;
  o.mean = {0.1, 0.2, 0.3};
  o.std = {0.5, 0.25, 2.0};
  const Batch out = apply_transform(fresh(batch), o, 0);
  ASSERT_EQ(out.images.sizes(), batch.images.sizes());
  for (int64_t c = 0; c < 3; ++c) {
    const auto expected = (batch.images.select(1, c) - o.mean[c]) / o.std[c];
    EXPECT_TRUE(torch::allclose(out.images.select(1, c), expected, 1e-6, 1e-6)) << "channel " << c;
  }
  EXPECT_TRUE(out.labels.equal(batch.labels));

  o.mean = {0.5};  // one value for every channel
  o.std = {0.5};
  EXPECT_TRUE(
      torch::allclose(apply_transform(fresh(batch), o, 0).images, batch.images * 2 - 1, 1e-6, 1e-6));
  o.mean = {0.1, 0.2};
  o.std = {1, 1};
  EXPECT_THROW(apply_transform(batch, o, 0), std::invalid_argument);
  o.mean = {0.1};
  o.std = {};
  EXPECT_THROW(apply_transform(batch, o, 0), std::invalid_argument);
}

TEST(TransformTest, ResizesOnlyWhenSizesDiffer) {
  const Batch batch = distinct_batch(2, 1, 28, 28);
  TransformOptions o;
  o.image_size = 32;
  const Batch out = apply_transform(batch, o, 0);
  ASSERT_EQ(out.images.sizes(), (std::vector<int64_t>{2, 1, 32, 32}));
  const auto expected = F::interpolate(batch.images, F::InterpolateFuncOptions()
                                                         .size(std::vector<int64_t>{32, 32})
                                                         .mode(torch::kBilinear)
                                                         .align_corners(false));
  EXPECT_TRUE(torch::allclose(out.images, expected));
  o.image_size = 28;
  EXPECT_TRUE(apply_transform(batch, o, 0).images.equal(batch.images));
  o.image_size = 0;
  EXPECT_TRUE(apply_transform(batch, o, 0).images.equal(batch.images));
}

TEST(TransformTest, TestModeOnlyResizesAndNormalizes) {
  const Batch batch = distinct_batch(8, 3, 8, 8);
  TransformOptions o = augment(2, true);
  o.train = false;
  o.image_size = 12;
  o.mean = {0.5};
  o.std = {0.25};
  const auto resized = F::interpolate(batch.images, F::InterpolateFuncOptions()
                                                        .size(std::vector<int64_t>{12, 12})
                                                        .mode(torch::kBilinear)
                                                        .align_corners(false));
  EXPECT_TRUE(
      torch::allclose(apply_transform(batch, o, 7).images, (resized - 0.5) / 0.25, 1e-6, 1e-6));
}

TEST(TransformTest, FlipsSomeSamplesDeterministically) {
  const Batch batch = distinct_batch(64, 2, 3, 5);
  const auto options = augment(0, true);
  const Batch out = apply_transform(batch, options, 11);
  EXPECT_TRUE(out.images.equal(apply_transform(batch, options, 11).images));
  EXPECT_FALSE(out.images.equal(apply_transform(batch, options, 12).images));
  int flipped = 0;
  for (int64_t i = 0; i < 64; ++i) {
    const auto original = batch.images[i];
    if (out.images[i].equal(original.flip({2}))) {
      ++flipped;
    } else {
      EXPECT_TRUE(out.images[i].equal(original)) << "sample " << i;
    }
  }
  EXPECT_GT(flipped, 10);
  EXPECT_LT(flipped, 54);
}

TEST(TransformTest, CropsWithZeroPaddingPerSample) {
  const int64_t padding = 2;
  const Batch batch = distinct_batch(32, 3, 6, 7);
  const auto options = augment(padding, false);
  const Batch out = apply_transform(batch, options, 5);
  ASSERT_EQ(out.images.sizes(), batch.images.sizes());
  EXPECT_TRUE(out.images.equal(apply_transform(batch, options, 5).images));
  EXPECT_FALSE(out.images.equal(apply_transform(batch, options, 6).images));
  const auto padded = torch::constant_pad_nd(batch.images, {padding, padding, padding, padding}, 0);
  std::set<std::pair<int64_t, int64_t>> offsets_seen;
  for (int64_t i = 0; i < 32; ++i) {
    bool matched = false;
    for (int64_t top = 0; top <= 2 * padding && !matched; ++top) {
      for (int64_t left = 0; left <= 2 * padding && !matched; ++left) {
        if (out.images[i].equal(padded[i].narrow(1, top, 6).narrow(2, left, 7))) {
          matched = true;
          offsets_seen.insert({top, left});
        }
      }
    }
    EXPECT_TRUE(matched) << "sample " << i << " is no padded crop of its input";
  }
  EXPECT_GT(offsets_seen.size(), 5u);  // offsets vary per sample
}

TEST(TransformTest, LeavesTheInputUntouched) {
  const Batch batch = distinct_batch(16, 3, 8, 8);
  const auto copy = batch.images.clone();
  TransformOptions o = augment(2, true);
  o.image_size = 10;
  o.mean = {0.5};
  o.std = {0.5};
  const Batch out = apply_transform(batch, o, 3);
  EXPECT_EQ(out.images.sizes(), (std::vector<int64_t>{16, 3, 10, 10}));
  EXPECT_TRUE(batch.images.equal(copy));
}

TEST(TransformTest, EmptyBatchKeepsItsShape) {
  const Batch batch = distinct_batch(0, 3, 8, 8);
  TransformOptions o = augment(2, true);
  o.image_size = 16;
  EXPECT_EQ(apply_transform(batch, o, 0).images.sizes(), (std::vector<int64_t>{0, 3, 16, 16}));
}

}  // namespace
}  // namespace tula::data
