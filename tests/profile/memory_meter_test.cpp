// The allocation meter counts exactly what LibTorch allocates, and the trial
// model's static memory matches what the model and optimizer must hold.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/zoo.hpp"
#include "profile/memory_meter.hpp"
#include "profile/trial_model.hpp"

namespace tula::profile {
namespace {

TEST(AllocationMeter, CountsLiveAndPeakBytes) {
  AllocationMeter meter;
  {
    auto a = torch::zeros({1000}, torch::kFloat);
    EXPECT_EQ(meter.live_bytes(), 4000);
    auto b = torch::zeros({500}, torch::kDouble);
    EXPECT_EQ(meter.live_bytes(), 8000);
  }
  EXPECT_TRUE(meter.saw_allocations());
  EXPECT_EQ(meter.live_bytes(), 0);
  EXPECT_EQ(meter.peak_bytes(), 8000);
  meter.reset_peak();
  EXPECT_EQ(meter.peak_bytes(), 0);
}

TEST(AllocationMeter, SeesTensorsSavedForBackward) {
  torch::nn::Linear layer(256, 256);
  auto x = torch::randn({64, 256});
  int64_t after_forward = 0;
  {
    AllocationMeter meter;
    auto y = torch::relu(layer(x)).sum();
    after_forward = meter.live_bytes();
    y.backward();
  }
  // At least the 64 x 256 activation relu keeps for backward.
  EXPECT_GE(after_forward, 64 * 256 * 4);
}

TEST(TrialModel, StaticMemoryIsWeightsGradientsAndMomentum) {
  ModelTarget target;
  target.model = "small_cnn";
  target.channels = 1;
  target.height = target.width = 28;
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  models::ModelOptions options{1, 10, 28};
  const auto reference = models::make_model("small_cnn", options);
  EXPECT_EQ(model.weight_bytes(), models::weight_bytes(*reference));
  EXPECT_EQ(model.gradient_bytes(), 4 * model.parameters());
  // The reducer's buckets as the profile records them: fc2 and fc1 first,
  // past the 1 MiB cap with fc1's weight, then the two convolutions.
  EXPECT_EQ(model.bucket_bytes(distributed::ReducerOptions{}),
            (std::vector<int64_t>{4 * (10 + 1280 + 128 + 401408), 4 * (64 + 18432 + 32 + 288)}));
  // The buckets hold every gradient plus one float per tensor for its norm.
  EXPECT_GE(model.gradient_buffer_bytes(), model.gradient_bytes());
  EXPECT_LT(model.gradient_buffer_bytes(), model.gradient_bytes() + 4096);
  EXPECT_EQ(model.optimizer_state_bytes(), -1) << "no state before the first step";
  const auto t = model.step(synthetic_batch(target, 4, 1));
  EXPECT_GT(t.forward_backward_s, 0);
  EXPECT_GT(t.optimizer_s, 0);
  EXPECT_EQ(model.optimizer_state_bytes(), model.gradient_bytes()) << "one momentum buffer per parameter";
}

}  // namespace
}  // namespace tula::profile
