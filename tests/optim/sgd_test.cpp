// Tula's SGD against LibTorch's own torch::optim::SGD (PyTorch's semantics):
// the same trajectory on the same gradients.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "optim/schedule.hpp"
#include "optim/sgd.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::optim {
namespace {

void expect_same_trajectory(double momentum, double weight_decay, bool nesterov,
                            std::vector<int64_t> shape = {5, 3}, torch::Dtype dtype = torch::kFloat) {
  torch::manual_seed(1);
  auto w_ref = torch::randn(shape, torch::TensorOptions(dtype).requires_grad(true));
  auto w_ours = w_ref.detach().clone().requires_grad_(true);
  torch::optim::SGD reference({w_ref}, torch::optim::SGDOptions(0.1).momentum(momentum).weight_decay(weight_decay).nesterov(nesterov));
  OptimizerOptions opts;
  opts.lr = 0.1;
  opts.momentum = momentum;
  opts.weight_decay = weight_decay;
  opts.nesterov = nesterov;
  SGD ours({{"w", w_ours, false}}, opts);
  for (int step = 0; step < 5; ++step) {
    auto g = torch::randn(shape, dtype);
    w_ref.mutable_grad() = g.clone();
    w_ours.mutable_grad() = g.clone();
    reference.step();
    ours.step(StepStats{});
    // The fused kernel rounds once per element where tensor ops round per op.
    ASSERT_TRUE(torch::allclose(w_ref, w_ours, 1e-5, 1e-6)) << "step " << step;
  }
}

TEST(SGD, PlainMatchesLibTorch) { expect_same_trajectory(0.0, 0.0, false); }
TEST(SGD, MomentumAndWeightDecayMatchLibTorch) { expect_same_trajectory(0.9, 5e-4, false); }
TEST(SGD, NesterovMatchesLibTorch) { expect_same_trajectory(0.9, 1e-4, true); }

// Large enough to be split across threads by the fused kernel.
TEST(SGD, FusedKernelMatchesLibTorchOnLargeTensors) { expect_same_trajectory(0.9, 5e-4, false, {300, 1000}); }
TEST(SGD, FusedNesterovMatchesLibTorchOnLargeTensors) { expect_same_trajectory(0.9, 5e-4, true, {70001}); }
// Doubles take the tensor-op path.
TEST(SGD, DoubleTensorsMatchLibTorch) { expect_same_trajectory(0.9, 5e-4, false, {7, 9}, torch::kDouble); }

TEST(SGD, StateSurvivesSaveAndLoad) {
  auto w = torch::ones({4}, torch::requires_grad());
  OptimizerOptions opts;
  SGD a({{"w", w, false}}, opts);
  w.mutable_grad() = torch::full({4}, 0.5);
  a.step(StepStats{});
  torch::serialize::OutputArchive out;
  a.save(out);
  std::stringstream buffer;
  out.save_to(buffer);
  auto w2 = w.detach().clone().requires_grad_(true);
  SGD b({{"w", w2, false}}, opts);
  torch::serialize::InputArchive in;
  in.load_from(buffer);
  b.load(in);
  w.mutable_grad() = torch::full({4}, 0.25);
  w2.mutable_grad() = torch::full({4}, 0.25);
  a.step(StepStats{});
  b.step(StepStats{});
  EXPECT_TRUE(torch::allclose(w, w2));
}

TEST(SGD, RejectsBadOptions) {
  auto w = torch::ones({1}, torch::requires_grad());
  OptimizerOptions bad;
  bad.lr = -1;
  EXPECT_THROW(SGD({{"w", w, false}}, bad), std::invalid_argument);
  OptimizerOptions nesterov;
  nesterov.momentum = 0;
  nesterov.nesterov = true;
  EXPECT_THROW(SGD({{"w", w, false}}, nesterov), std::invalid_argument);
}

TEST(Schedule, WarmupRisesLinearlyToThePeak) {
  ScheduleOptions o;
  o.kind = "constant";
  o.base_lr = 0.4;
  o.warmup_epochs = 2;
  EXPECT_DOUBLE_EQ(learning_rate(o, 0.0), 0.0);
  EXPECT_DOUBLE_EQ(learning_rate(o, 1.0), 0.2);
  EXPECT_DOUBLE_EQ(learning_rate(o, 2.0), 0.4);
  EXPECT_DOUBLE_EQ(learning_rate(o, 5.0), 0.4);
}

TEST(Schedule, CosineAnnealsAfterWarmup) {
  ScheduleOptions o;
  o.kind = "cosine";
  o.base_lr = 1.0;
  o.warmup_epochs = 1;
  o.total_epochs = 11;
  EXPECT_DOUBLE_EQ(learning_rate(o, 1.0), 1.0);
  EXPECT_NEAR(learning_rate(o, 6.0), 0.5, 1e-12);
  EXPECT_NEAR(learning_rate(o, 11.0), 0.0, 1e-12);
}

TEST(Schedule, StepDecaysAtMilestones) {
  ScheduleOptions o;
  o.kind = "step";
  o.base_lr = 1.0;
  o.total_epochs = 100;
  EXPECT_DOUBLE_EQ(learning_rate(o, 49.9), 1.0);
  EXPECT_NEAR(learning_rate(o, 50.0), 0.1, 1e-12);
  EXPECT_NEAR(learning_rate(o, 75.0), 0.01, 1e-12);
  o.kind = "linear-ish";
  EXPECT_THROW(learning_rate(o, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace tula::optim
