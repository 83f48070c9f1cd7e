// The averaged weights an evaluation scores: the average's arithmetic, the
// swap in and out of the model, and the checkpoint that carries it.
#include "train/weight_average.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

#include "helpers/temp_dir.hpp"
#include "optim/make_optimizer.hpp"
#include "train/checkpoint.hpp"

namespace tula::train {
namespace {

torch::nn::Linear filled(double value) {
  torch::nn::Linear layer(3, 2);
  torch::NoGradGuard no_grad;
  for (auto& p : layer->parameters()) p.fill_(value);
  return layer;
}

std::unique_ptr<optim::Optimizer> sgd_for(torch::nn::Module& m) {
  std::vector<optim::ParamRef> params;
  for (const auto& named : m.named_parameters()) params.push_back({named.key(), named.value(), false});
  return optim::make_optimizer(params, optim::OptimizerOptions{}, 128);
}

void fill(torch::nn::Module& m, double value) {
  torch::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.fill_(value);
}

TEST(WeightAverage, RampsItsDecayInAndThenHoldsIt) {
  auto layer = filled(0);
  const WeightAverage average(*layer, 0.99);
  EXPECT_DOUBLE_EQ(average.decay_at(0), 0.1);
  EXPECT_DOUBLE_EQ(average.decay_at(10), 11.0 / 20.0);
  EXPECT_DOUBLE_EQ(average.decay_at(890), 0.99);
  EXPECT_DOUBLE_EQ(average.decay_at(100'000), 0.99);
}

TEST(WeightAverage, AveragesTheWeightsAsTheyMove) {
  auto layer = filled(1);
  WeightAverage average(*layer, 0.99);
  fill(*layer, 3);
  average.update(90);  // decay 91/100: 0.91 * 1 + 0.09 * 3
  {
    const auto swapped = average.swap_in();
    for (const auto& p : layer->parameters()) EXPECT_TRUE(torch::allclose(p, torch::full_like(p, 1.18)));
  }
  for (const auto& p : layer->parameters()) EXPECT_TRUE(torch::equal(p, torch::full_like(p, 3))) << "own weights back";
}

TEST(WeightAverage, CarriesFloatingBuffersAndLeavesCounts) {
  torch::nn::BatchNorm1d norm(2);
  WeightAverage average(*norm, 0.5);
  {
    torch::NoGradGuard no_grad;
    norm->running_mean.fill_(4);
    norm->num_batches_tracked.fill_(7);
  }
  average.update(1'000);  // decay 0.5: the mean's average goes from 0 to 2
  const auto swapped = average.swap_in();
  EXPECT_TRUE(torch::allclose(norm->running_mean, torch::full({2}, 2.0)));
  EXPECT_EQ(norm->num_batches_tracked.item<int64_t>(), 7);
}

TEST(WeightAverage, RefusesADecayOutsideZeroToOne) {
  auto layer = filled(0);
  EXPECT_THROW(WeightAverage(*layer, 1.0), std::invalid_argument);
  EXPECT_THROW(WeightAverage(*layer, 0.0), std::invalid_argument);
}

TEST(WeightAverage, ACheckpointCarriesTheAverage) {
  const testing::TempDir temp("tula-weight-average");
  auto layer = filled(1);
  auto optimizer = sgd_for(*layer);
  WeightAverage average(*layer, 0.99);
  fill(*layer, 3);
  average.update(90);
  CheckpointState state;
  state.model = "linear";
  save_checkpoint(temp.path().string(), *layer, *optimizer, state, false, &average);

  auto restored = filled(0);
  auto restored_optimizer = sgd_for(*restored);
  WeightAverage restored_average(*restored, 0.99);
  ASSERT_TRUE(load_checkpoint(temp.path().string(), *restored, *restored_optimizer, torch::kCPU, &restored_average));
  for (const auto& p : restored->parameters()) EXPECT_TRUE(torch::equal(p, torch::full_like(p, 3)));
  const auto swapped = restored_average.swap_in();
  for (const auto& p : restored->parameters()) EXPECT_TRUE(torch::allclose(p, torch::full_like(p, 1.18)));
}

TEST(WeightAverage, ACheckpointWithoutOneStartsTheAverageAtItsWeights) {
  const testing::TempDir temp("tula-weight-average");
  auto layer = filled(3);
  auto optimizer = sgd_for(*layer);
  CheckpointState state;
  state.model = "linear";
  save_checkpoint(temp.path().string(), *layer, *optimizer, state);

  auto restored = filled(0);
  auto restored_optimizer = sgd_for(*restored);
  WeightAverage restored_average(*restored, 0.99);
  ASSERT_TRUE(load_checkpoint(temp.path().string(), *restored, *restored_optimizer, torch::kCPU, &restored_average));
  const auto swapped = restored_average.swap_in();
  for (const auto& p : restored->parameters()) EXPECT_TRUE(torch::equal(p, torch::full_like(p, 3)));
}

}  // namespace
}  // namespace tula::train
