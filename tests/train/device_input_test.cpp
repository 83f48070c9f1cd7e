// The device input on the CPU (the same code that runs on CUDA but for the
// side stream): a batch of bytes converted where it trains gives the values
// the loader's float path gives (resize and normalization included), staging
// holds one batch at a time, and --input-dtype resolves by device.
#include "train/device_input.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "data/transform.hpp"
#include "helpers/expect_error.hpp"

namespace tula::train {
namespace {

data::Batch byte_batch(int64_t n, int64_t channels, int64_t side) {
  torch::manual_seed(5);
  data::Batch b;
  b.images = torch::randint(0, 256, {n, channels, side, side}, torch::kInt64).to(torch::kUInt8);
  b.labels = torch::randint(0, 10, {n}, torch::kInt64);
  return b;
}

// What the loader's float path makes of the same pixels.
data::Batch float_path(const data::Batch& bytes, const DeviceInputOptions& o) {
  data::TransformOptions t;
  t.train = false;
  t.image_size = o.image_size;
  t.mean = o.mean;
  t.std = o.std;
  return data::apply_transform({bytes.images.to(torch::kFloat32).div_(255.0), bytes.labels}, t, 0);
}

TEST(DeviceInput, BytesConvertToTheFloatPathsValues) {
  const auto bytes = byte_batch(6, 3, 10);
  DeviceInputOptions o;
  o.mean = {0.485, 0.456, 0.406};
  o.std = {0.229, 0.224, 0.225};
  for (const int64_t size : {0, 10, 16}) {
    o.image_size = size;
    const auto on_device = to_device(bytes, o);
    const auto expected = float_path(bytes, o);
    ASSERT_EQ(on_device.images.scalar_type(), torch::kFloat32);
    ASSERT_EQ(on_device.images.sizes(), expected.images.sizes()) << "size " << size;
    EXPECT_TRUE(torch::equal(on_device.images, expected.images)) << "size " << size;
    EXPECT_TRUE(torch::equal(on_device.labels, bytes.labels));
  }
  // One mean and deviation for every channel; none at all.
  o.image_size = 0;
  o.mean = {0.5};
  o.std = {0.25};
  EXPECT_TRUE(torch::equal(to_device(bytes, o).images, float_path(bytes, o).images));
  o.mean.clear();
  o.std.clear();
  EXPECT_TRUE(torch::equal(to_device(bytes, o).images, bytes.images.to(torch::kFloat32).div_(255.0)));
}

TEST(DeviceInput, AFloatBatchPassesAsItIs) {
  DeviceInputOptions o;
  o.image_size = 32;  // for bytes only: a float batch comes finished
  o.mean = {0.5};
  o.std = {0.25};
  data::Batch b;
  b.images = torch::rand({2, 1, 8, 8});
  b.labels = torch::tensor({1, 2}, torch::kInt64);
  EXPECT_TRUE(torch::equal(to_device(b, o).images, b.images));
}

TEST(DeviceInput, StagesOneBatchAtATime) {
  DeviceInputOptions o;
  o.mean = {0.5};
  o.std = {0.5};
  DeviceInput input(o);
  EXPECT_FALSE(input.staged());
  tula::testing::expect_error<std::logic_error>([&] { input.take(); }, {"no batch staged"});
  const auto first = byte_batch(2, 1, 4);
  input.stage(first);
  EXPECT_TRUE(input.staged());
  tula::testing::expect_error<std::logic_error>([&] { input.stage(byte_batch(1, 1, 4)); }, {"staged already"});
  const auto taken = input.take();
  EXPECT_FALSE(input.staged());
  EXPECT_TRUE(torch::equal(taken.images, to_device(first, o).images));
}

TEST(DeviceInput, InputDtypeAutoIsBytesOnCudaAndFloatsOnTheCpu) {
  EXPECT_EQ(resolve_input_dtype("auto", torch::Device(torch::kCPU)), InputDtype::kFloat32);
  EXPECT_EQ(resolve_input_dtype("auto", torch::Device(torch::kCUDA, 0)), InputDtype::kUint8);
  EXPECT_EQ(resolve_input_dtype("uint8", torch::Device(torch::kCPU)), InputDtype::kUint8);
  EXPECT_EQ(resolve_input_dtype("float32", torch::Device(torch::kCUDA, 0)), InputDtype::kFloat32);
  EXPECT_STREQ(input_dtype_name(InputDtype::kUint8), "uint8");
  tula::testing::expect_error<std::invalid_argument>([] { resolve_input_dtype("fp16", torch::Device(torch::kCPU)); },
                                                     {"--input-dtype 'fp16'", "auto, float32, uint8"});
}

}  // namespace
}  // namespace tula::train
