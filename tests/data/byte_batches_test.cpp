// Batches gathered as bytes (what travels to a device to be converted there):
// for the sets held or generated as 8-bit pixels they are exactly 255 times
// the float batches, also through the loader's crops and flips; the
// transform refuses to resize or normalize bytes (the device does that).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <numeric>

#include "data/dataset.hpp"
#include "data/held_out.hpp"
#include "data/in_memory_dataset.hpp"
#include "data/loader.hpp"
#include "data/transform.hpp"
#include "helpers/expect_error.hpp"

namespace tula::data {
namespace {

std::shared_ptr<InMemoryDataset> random_bytes_set(int64_t n, int64_t channels, int64_t side) {
  torch::manual_seed(11);
  auto images = torch::randint(0, 256, {n, channels, side, side}, torch::kInt64).to(torch::kUInt8);
  auto labels = torch::randint(0, 10, {n}, torch::kInt64);
  return std::make_shared<InMemoryDataset>("bytes", images, labels, 10);
}

std::vector<int64_t> first(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

void expect_255_times(const Batch& bytes, const Batch& floats) {
  ASSERT_EQ(bytes.images.scalar_type(), torch::kUInt8);
  ASSERT_EQ(bytes.images.sizes(), floats.images.sizes());
  EXPECT_TRUE(torch::equal(bytes.labels, floats.labels));
  EXPECT_TRUE(torch::allclose(bytes.images.to(torch::kFloat32), floats.images * 255, 0, 1e-4));
}

TEST(ByteBatches, AnInMemorySetGivesItsBytesAndFloatsOf255ThsOfThem) {
  const auto set = random_bytes_set(20, 3, 8);
  const std::vector<int64_t> indices = {7, 3, 19, 0, 3};
  expect_255_times(set->gather_bytes(indices, 5), set->gather(indices));
  tula::testing::expect_error<std::out_of_range>([&] { set->gather_bytes({20}, 0); }, {"bytes", "sample index 20 out of range"});
}

TEST(ByteBatches, SyntheticAndSubsetSetsGiveTheBytesOfTheirFloats) {
  DatasetOptions o;
  o.name = "synthetic";
  o.synthetic_size = 50;
  o.synthetic_shape = {3, 6, 5};
  const auto synthetic = open_dataset(o, Split::kTrain);
  const std::vector<int64_t> indices = {0, 49, 17};
  expect_255_times(synthetic->gather_bytes(indices, 1), synthetic->gather(indices));
  const auto held = hold_out(synthetic, 10, 3);
  expect_255_times(held.validation->gather_bytes({0, 9}, 1), held.validation->gather({0, 9}));
  expect_255_times(held.train->gather_bytes({5, 39}, 1), held.train->gather_seeded({5, 39}, 1));
}

// Through the loader: the same crops and flips, drawn from the same seeds.
TEST(ByteBatches, TheLoaderCropsAndFlipsBytesAsItDoesFloats) {
  const auto set = random_bytes_set(40, 3, 12);
  LoaderOptions o;
  o.batch_size = 16;
  o.seed = 99;
  o.idle_priority = false;
  o.transform.crop_padding = 2;
  o.transform.horizontal_flip = true;
  LoaderOptions as_bytes = o;
  as_bytes.bytes = true;
  PrefetchLoader floats(set, first(40), o);
  PrefetchLoader bytes(set, first(40), as_bytes);
  int batches = 0;
  while (auto f = floats.next()) {
    auto b = bytes.next();
    ASSERT_TRUE(b.has_value());
    expect_255_times(*b, *f);
    ++batches;
  }
  EXPECT_FALSE(bytes.next().has_value());
  EXPECT_EQ(batches, 3);
  // The crops did something: a batch is not the set's bytes as they are.
  PrefetchLoader again(set, first(40), as_bytes);
  EXPECT_FALSE(torch::equal(again.next()->images, set->gather_bytes(first(16), 0).images));
}

TEST(ByteBatches, TheTransformLeavesResizingAndNormalizingBytesToTheDevice) {
  const auto set = random_bytes_set(4, 1, 8);
  TransformOptions resize;
  resize.image_size = 16;
  tula::testing::expect_error<std::invalid_argument>([&] { apply_transform(set->gather_bytes(first(4), 0), resize, 0); },
                              {"batch of bytes", "on the device"});
  TransformOptions normalize;
  normalize.mean = {0.5};
  normalize.std = {0.25};
  tula::testing::expect_error<std::invalid_argument>([&] { apply_transform(set->gather_bytes(first(4), 0), normalize, 0); },
                              {"batch of bytes", "on the device"});
}

}  // namespace
}  // namespace tula::data
