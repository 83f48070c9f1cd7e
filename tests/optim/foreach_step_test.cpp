// Each optimizer's multi-tensor (foreach) step against its per-tensor step on
// the CPU: the same gradients for 20 steps leave the same weights to 1e-6 and
// the same reported factors (to a relative 1e-5), for every optimizer and the variants of its
// rule (momentum, Nesterov, weight decay, biases, AGS's statistics and units).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "optim/ags.hpp"
#include "optim/make_optimizer.hpp"

namespace tula::optim {
namespace {

constexpr int kSteps = 20;

// A small network's worth of tensors: convolution and linear weights, biases,
// a norm's weight, one large enough for the CPU kernel's threads.
std::vector<ParamRef> make_params(uint64_t seed) {
  torch::manual_seed(seed);
  auto make = [](std::vector<int64_t> shape) { return (0.5 * torch::randn(shape)).requires_grad_(true); };
  return {{"conv1.weight", make({8, 3, 3, 3}), false}, {"conv1.bias", make({8}), true},
          {"bn1.weight", make({8}), true},             {"bn1.bias", make({8}), true},
          {"fc.weight", make({300, 400}), false},      {"fc.bias", make({300}), true},
          {"head.weight", make({10, 300}), false}};
}

std::vector<ParamRef> copy_params(const std::vector<ParamRef>& params) {
  std::vector<ParamRef> out;
  for (const auto& p : params) out.push_back({p.name, p.param.detach().clone().requires_grad_(true), p.is_bias_or_norm});
  return out;
}

// What the engine measures when it has two batch sizes (a global batch over
// workers): the averaged gradient's squared norm and a noisier local one.
StepStats stats_for(const std::vector<ParamRef>& params, int64_t local_batch, int64_t global_batch, bool per_tensor) {
  StepStats s;
  s.local_batch = local_batch;
  s.global_batch = global_batch;
  s.world_size = static_cast<int>(global_batch / local_batch);
  if (!per_tensor) return s;
  for (const auto& p : params) {
    const double g2 = p.param.grad().pow(2).sum().item<double>();
    s.global_grad_sq_per_tensor.push_back(g2);
    s.local_grad_sq_per_tensor.push_back(g2 * 1.7 + 0.01);
  }
  return s;
}

double max_difference(const std::vector<ParamRef>& a, const std::vector<ParamRef>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, (a[i].param - b[i].param).abs().max().item<double>());
  }
  return worst;
}

// Numbers of two reports equal to a relative 1e-5 (and structure equal): the
// foreach path's norms are float32 reductions, as on a GPU, where the
// per-tensor path's accumulate in double; on a tensor of 10^5 values the two
// differ by about 1e-6.
void expect_same_report(const nlohmann::json& a, const nlohmann::json& b, const std::string& at) {
  ASSERT_EQ(a.type(), b.type()) << at;
  if (a.is_object()) {
    ASSERT_EQ(a.size(), b.size()) << at;
    for (auto it = a.begin(); it != a.end(); ++it) {
      ASSERT_TRUE(b.contains(it.key())) << at << "." << it.key();
      expect_same_report(it.value(), b.at(it.key()), at + "." + it.key());
    }
  } else if (a.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::abs(x))) << at;
  } else {
    EXPECT_EQ(a, b) << at;
  }
}

struct StepRun {
  int64_t local_batch = 128, global_batch = 512, reference_batch = 128;
  bool engine_norms = true;  // the stats carry per-tensor norms, as with several workers
};

void expect_foreach_equals_per_tensor(OptimizerOptions options, const StepRun& run = {}) {
  auto per_tensor_params = make_params(7);
  auto foreach_params = copy_params(per_tensor_params);
  options.update = "per-tensor";
  auto per_tensor = make_optimizer(per_tensor_params, options, run.reference_batch);
  options.update = "foreach";
  auto foreach = make_optimizer(foreach_params, options, run.reference_batch);
  for (int step = 0; step < kSteps; ++step) {
    torch::manual_seed(100 + step);
    std::vector<torch::Tensor> grads;
    for (size_t i = 0; i < per_tensor_params.size(); ++i) {
      // Gradients of a training run's scale: the weights stay of order 1, where
      // float32's spacing (6e-8 to 1.2e-7) leaves room to tell 1e-6 apart.
      auto g = torch::randn_like(per_tensor_params[i].param) * 0.05 * (1.0 + 0.1 * step);
      per_tensor_params[i].param.mutable_grad() = g.clone();
      foreach_params[i].param.mutable_grad() = g.clone();
      grads.push_back(g);
    }
    auto stats = stats_for(per_tensor_params, run.local_batch, run.global_batch, run.engine_norms);
    stats.step = step;
    per_tensor->set_lr(0.05);
    foreach->set_lr(0.05);
    per_tensor->step(stats);
    foreach->step(stats);
    ASSERT_LE(max_difference(per_tensor_params, foreach_params), 1e-6) << options.name << " step " << step;
    for (size_t i = 0; i < grads.size(); ++i) {  // the metrics read the gradients after the step
      ASSERT_TRUE(torch::equal(foreach_params[i].param.grad(), grads[i])) << "the step changed gradient " << i;
    }
    expect_same_report(per_tensor->report(), foreach->report(), options.name + " step " + std::to_string(step));
  }
}

OptimizerOptions named(const std::string& name) {
  OptimizerOptions o;
  o.name = name;
  return o;
}

TEST(ForeachStep, SgdPlainEqualsPerTensor) {
  auto o = named("sgd");
  o.momentum = 0;
  o.weight_decay = 0;
  expect_foreach_equals_per_tensor(o);
}
TEST(ForeachStep, SgdMomentumAndWeightDecayEqualPerTensor) { expect_foreach_equals_per_tensor(named("sgd")); }
TEST(ForeachStep, SgdNesterovEqualsPerTensor) {
  auto o = named("sgd");
  o.nesterov = true;
  expect_foreach_equals_per_tensor(o);
}
TEST(ForeachStep, SgdNesterovWithoutDecayLeavesTheGradientAlone) {
  auto o = named("sgd");
  o.nesterov = true;
  o.weight_decay = 0;
  expect_foreach_equals_per_tensor(o);
}
TEST(ForeachStep, LarsEqualsPerTensor) {
  auto o = named("lars");
  o.lars.trust_coefficient = 0.02;
  expect_foreach_equals_per_tensor(o);
}
TEST(ForeachStep, LarsNesterovMeasuringItsOwnNormsEqualsPerTensor) {
  auto o = named("lars");
  o.nesterov = true;
  StepRun run;
  run.engine_norms = false;
  expect_foreach_equals_per_tensor(o, run);
}
TEST(ForeachStep, LambEqualsPerTensor) {
  auto o = named("lamb");
  o.lr = 0.01;
  expect_foreach_equals_per_tensor(o);
}
// Above the reference batch every term of the rule is in play: noise gain
// (two batch sizes), trust, trend, clipping.
TEST(ForeachStep, AgsAboveTheReferenceBatchEqualsPerTensor) { expect_foreach_equals_per_tensor(named("ags")); }
TEST(ForeachStep, AgsPerLayerEqualsPerTensor) {
  auto o = named("ags");
  o.ags.per_layer = true;
  expect_foreach_equals_per_tensor(o);
}
// One worker: no noise estimate, norms measured by the optimizer itself.
TEST(ForeachStep, AgsOneWorkerBelowTheReferenceBatchEqualsPerTensor) {
  StepRun run;
  run.local_batch = run.global_batch = 64;
  run.engine_norms = false;
  expect_foreach_equals_per_tensor(named("ags"), run);
}
TEST(ForeachStep, AgsUnboundedNesterovEqualsPerTensor) {
  auto o = named("ags");
  o.ags.bounded = false;
  o.nesterov = true;
  expect_foreach_equals_per_tensor(o);
}

// A checkpoint written by the foreach path resumes the per-tensor path (and
// the other way) on the same trajectory: the state is the same state.
TEST(ForeachStep, AgsStateCrossesBetweenThePaths) {
  auto a_params = make_params(3);
  auto b_params = copy_params(a_params);
  auto o = named("ags");
  o.update = "foreach";
  AGS a(a_params, o, 128);
  o.update = "per-tensor";
  AGS b(b_params, o, 128);
  auto set_grads = [&](int step) {
    torch::manual_seed(50 + step);
    for (size_t i = 0; i < a_params.size(); ++i) {
      auto g = torch::randn_like(a_params[i].param) * 0.05;
      a_params[i].param.mutable_grad() = g.clone();
      b_params[i].param.mutable_grad() = g.clone();
    }
  };
  for (int step = 0; step < 5; ++step) {
    set_grads(step);
    auto stats = stats_for(a_params, 128, 512, true);
    a.step(stats);
    b.step(stats);
  }
  torch::serialize::OutputArchive out;
  a.save(out);
  std::stringstream buffer;
  out.save_to(buffer);
  auto c_params = copy_params(a_params);
  AGS c(c_params, o, 128);  // per-tensor, from the foreach path's checkpoint
  torch::serialize::InputArchive in;
  in.load_from(buffer);
  c.load(in);
  for (int step = 5; step < 10; ++step) {
    set_grads(step);
    for (size_t i = 0; i < a_params.size(); ++i) c_params[i].param.mutable_grad() = a_params[i].param.grad().clone();
    auto stats = stats_for(a_params, 128, 512, true);
    b.step(stats);
    c.step(stats);
  }
  EXPECT_LE(max_difference(b_params, c_params), 1e-6);
  for (size_t i = 0; i < b.factors().size(); ++i) EXPECT_NEAR(b.factors()[i], c.factors()[i], 1e-5 * b.factors()[i]);
}

TEST(ForeachStep, UnknownUpdateIsRefusedByName) {
  auto o = named("sgd");
  o.update = "fused";
  try {
    o.validate();
    FAIL() << "accepted --optimizer-update fused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--optimizer-update"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tula::optim
