// LARS, LAMB and AGS against their definitions written with tensor ops, and
// the learning-rate rules of large-batch training.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "optim/ags.hpp"
#include "optim/lamb.hpp"
#include "optim/lars.hpp"
#include "optim/lr_rules.hpp"
#include "optim/make_optimizer.hpp"

namespace tula::optim {
namespace {

StepStats stats_for(const std::vector<torch::Tensor>& ws, int64_t local_batch, int64_t global_batch,
                    double noise_share) {
  StepStats s;
  s.local_batch = local_batch;
  s.global_batch = global_batch;
  s.world_size = static_cast<int>(global_batch / local_batch);
  for (const auto& w : ws) {
    const double g2 = w.grad().pow(2).sum().item<double>();
    s.global_grad_sq_per_tensor.push_back(g2);
    // The local (smaller-batch) gradient carries more noise.
    s.local_grad_sq_per_tensor.push_back(g2 * (1.0 + noise_share));
    s.global_grad_sq += g2;
    s.local_grad_sq += g2 * (1.0 + noise_share);
  }
  return s;
}

TEST(LARS, MatchesTrustRatioDefinition) {
  torch::manual_seed(2);
  auto w = torch::randn({20, 10});
  auto b = torch::randn({20});
  auto w_ours = w.clone().requires_grad_(true), b_ours = b.clone().requires_grad_(true);
  OptimizerOptions o;
  o.name = "lars";
  o.lr = 0.5;
  o.momentum = 0.9;
  o.weight_decay = 1e-3;
  o.lars.trust_coefficient = 0.02;
  LARS lars({{"w", w_ours, false}, {"b", b_ours, true}}, o);
  torch::Tensor vw, vb;
  for (int step = 0; step < 3; ++step) {
    auto gw = torch::randn({20, 10}), gb = torch::randn({20});
    w_ours.mutable_grad() = gw.clone();
    b_ours.mutable_grad() = gb.clone();
    lars.step(stats_for({w_ours, b_ours}, 8, 16, 0.5));
    const double trust = o.lars.trust_coefficient * w.norm().item<double>() /
                         (gw.norm().item<double>() + o.weight_decay * w.norm().item<double>());
    auto dw = trust * (gw + o.weight_decay * w);
    vw = vw.defined() ? o.momentum * vw + dw : dw;
    w = w - o.lr * vw;
    vb = vb.defined() ? o.momentum * vb + gb : gb;  // biases: plain momentum, no decay
    b = b - o.lr * vb;
    ASSERT_TRUE(torch::allclose(w_ours.detach(), w, 1e-5, 1e-6)) << "step " << step;
    ASSERT_TRUE(torch::allclose(b_ours.detach(), b, 1e-5, 1e-6)) << "step " << step;
  }
  EXPECT_TRUE(lars.report().contains("trust_ratio"));
}

TEST(LARS, NesterovLooksAheadAlongTheTrustScaledStep) {
  torch::manual_seed(3);
  auto w = torch::randn({12, 5});
  auto w_ours = w.clone().requires_grad_(true);
  OptimizerOptions o;
  o.name = "lars";
  o.lr = 0.3;
  o.momentum = 0.9;
  o.weight_decay = 1e-3;
  o.nesterov = true;
  o.lars.trust_coefficient = 0.05;
  LARS lars({{"w", w_ours, false}}, o);
  torch::Tensor v;
  for (int step = 0; step < 3; ++step) {
    auto g = torch::randn({12, 5});
    w_ours.mutable_grad() = g.clone();
    lars.step(stats_for({w_ours}, 8, 16, 0.5));
    const double wn = w.norm().item<double>();
    const double trust = o.lars.trust_coefficient * wn / (g.norm().item<double>() + o.weight_decay * wn);
    auto d = trust * (g + o.weight_decay * w);
    v = v.defined() ? o.momentum * v + d : d;
    w = w - o.lr * (d + o.momentum * v);
    ASSERT_TRUE(torch::allclose(w_ours.detach(), w, 1e-5, 1e-6)) << "step " << step;
  }
}

TEST(OptimizerOptions, RefusesNesterovForLambAndSaysWhy) {
  OptimizerOptions o;
  o.name = "lamb";
  o.nesterov = true;
  try {
    o.validate();
    FAIL() << "lamb with nesterov was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--nesterov does not apply to lamb"), std::string::npos) << e.what();
  }
  for (const char* name : {"sgd", "lars", "ags"}) {
    o.name = name;
    EXPECT_NO_THROW(o.validate()) << name;
  }
}

TEST(LAMB, MatchesDefinition) {
  torch::manual_seed(4);
  auto w = torch::randn({30});
  auto w_ours = w.clone().requires_grad_(true);
  OptimizerOptions o;
  o.name = "lamb";
  o.lr = 0.1;
  o.momentum = 0.9;  // beta1
  o.weight_decay = 0.01;
  LAMB lamb({{"w", w_ours, false}}, o);
  auto m = torch::zeros({30}), v = torch::zeros({30});
  for (int t = 1; t <= 3; ++t) {
    auto g = torch::randn({30});
    w_ours.mutable_grad() = g.clone();
    lamb.step(StepStats{});
    const double beta1 = o.momentum, beta2 = o.lamb.beta2;
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    auto r = (m / (1 - std::pow(beta1, t))) / ((v / (1 - std::pow(beta2, t))).sqrt() + o.lamb.eps) + o.weight_decay * w;
    w = w - o.lr * (w.norm() / r.norm()) * r;
    ASSERT_TRUE(torch::allclose(w_ours.detach(), w, 1e-5, 1e-6)) << "step " << t;
  }
}

std::vector<ParamRef> three_tensors() {
  torch::manual_seed(6);
  return {{"conv", torch::randn({16, 8}).requires_grad_(true), false},
          {"fc", torch::randn({10, 16}).mul_(0.1).requires_grad_(true), false},
          {"bias", torch::randn({10}).requires_grad_(true), true}};
}

void fill_grads(std::vector<ParamRef>& ps, double scale) {
  for (auto& p : ps) p.param.mutable_grad() = torch::randn(p.param.sizes()) * scale;
}

TEST(AGS, FactorsStayWithinTheirBounds) {
  auto ps = three_tensors();
  OptimizerOptions o;
  o.name = "ags";
  o.ags.s_min = 1.0;
  o.ags.s_max = 4.0;
  AGS ags(ps, o, /*reference_batch=*/64);
  std::vector<torch::Tensor> ws;
  for (auto& p : ps) ws.push_back(p.param);
  for (int step = 0; step < 30; ++step) {
    fill_grads(ps, step < 10 ? 1.0 : 0.1 * (step % 3 + 1));  // a norm that falls, then jumps around
    ags.step(stats_for(ws, 128, 1024, step % 2 ? 20.0 : 0.01));
    for (double f : ags.factors()) {
      ASSERT_GE(f, o.ags.s_min);
      ASSERT_LE(f, o.ags.s_max);
    }
  }
  auto report = ags.report();
  EXPECT_LE(report["ags_factors"]["max"].get<double>(), 4.0);
}

// AGS's factors after a few steps with only the noise statistic on (no trust
// or trend term), B_ref = 64, at the given per-worker and global batch.
std::vector<double> noise_only_factors(int64_t local_batch, int64_t global_batch, double noise_share,
                                       bool bounded = true) {
  auto ps = three_tensors();
  OptimizerOptions o;
  o.name = "ags";
  o.ags.bounded = bounded;
  o.ags.use_trust = false;
  o.ags.use_trend = false;
  AGS ags(ps, o, /*reference_batch=*/64);
  std::vector<torch::Tensor> ws;
  for (auto& p : ps) ws.push_back(p.param);
  for (int step = 0; step < 5; ++step) {
    fill_grads(ps, 1.0);
    ags.step(stats_for(ws, local_batch, global_batch, noise_share));
  }
  return ags.factors();
}

TEST(AGS, NoiseGainFollowsTheNoiseScale) {
  // No clipping: a noiseless gradient gives gain 1 (a large batch is worth
  // one small step), a noise-dominated one B / B_ref.
  for (double noise_share : {0.0, 1e6}) {
    for (double f : noise_only_factors(128, 1024, noise_share, /*bounded=*/false)) {
      EXPECT_NEAR(f, noise_share == 0.0 ? 1.0 : 1024.0 / 64.0, 0.05) << noise_share;
    }
  }
}

TEST(AGS, BelowTheReferenceBatchTheFloorScalesDownLinearly) {
  // Noise-dominated gradients at B = 16 against B_ref = 64: a step is worth a
  // quarter of a reference step, and the default floor lets the factor say so.
  for (double f : noise_only_factors(8, 16, 1e6)) EXPECT_NEAR(f, 16.0 / 64.0, 0.01);
}

TEST(AGS, OneWorkerBelowTheReferenceBatchScalesLinearly) {
  // One worker measures no gradient noise; below B_ref the factor takes the
  // smaller limit of the noise gain, B / B_ref, rather than the reference rate.
  for (double f : noise_only_factors(16, 16, 0.0)) EXPECT_NEAR(f, 16.0 / 64.0, 1e-9);
}

// The factors of every step at (local, global) batch against B_ref = 128, all
// three statistics on, over gradients whose norm rises (the trend damps) on
// tensors whose weights differ tenfold in scale (the trust ratios differ).
std::vector<std::vector<double>> shaped_factors(int64_t local_batch, int64_t global_batch, double s_max = 0) {
  auto ps = three_tensors();
  OptimizerOptions o;
  o.name = "ags";
  o.ags.s_max = s_max;
  AGS ags(ps, o, /*reference_batch=*/128);
  std::vector<torch::Tensor> ws;
  for (auto& p : ps) ws.push_back(p.param);
  std::vector<std::vector<double>> factors;
  for (int step = 0; step < 12; ++step) {
    fill_grads(ps, 0.1 * (step + 1));
    ags.step(stats_for(ws, local_batch, global_batch, 3.0));
    factors.push_back(ags.factors());
  }
  return factors;
}

TEST(AGS, AtTheReferenceBatchTheStepIsTheTunedOne) {
  // Under the default upper bound B / B_ref = 1, trust and trend could only
  // lower steps; the factor is the noise gain alone, which is 1 at B_ref.
  for (const auto& step : shaped_factors(64, 128)) {
    for (double f : step) EXPECT_DOUBLE_EQ(f, 1.0);
  }
  // One worker below B_ref: the gain's smaller limit B / B_ref, unshaped.
  for (const auto& step : shaped_factors(32, 32)) {
    for (double f : step) EXPECT_DOUBLE_EQ(f, 32.0 / 128.0);
  }
  // With room above 1 the same statistics shape the steps again.
  double furthest = 0;
  for (const auto& step : shaped_factors(64, 128, /*s_max=*/2.0)) {
    for (double f : step) furthest = std::max(furthest, std::abs(f - 1.0));
  }
  EXPECT_GT(furthest, 0.05) << "trust and trend act where the bound lets them raise a step";
}

// The noise gain of a unit from its summed signal and noise estimates, as
// docs/ags.md writes them, for constant per-tensor squared norms.
double expected_gain(const std::vector<double>& global, const std::vector<double>& local, double b, double B,
                     double B_ref) {
  double G2 = 0, S = 0;
  for (size_t i = 0; i < global.size(); ++i) {
    G2 += (B * global[i] - b * local[i]) / (B - b);
    S += (local[i] - global[i]) / (1 / b - 1 / B);
  }
  return (S / B_ref + G2) / (S / B + G2);
}

TEST(AGS, PerLayerFactorsComeFromTheLayersSummedStatistics) {
  // A layer whose weight is noisy and whose bias is not: per tensor they get
  // different gains; per layer both get the gain of the layer's sums.
  for (bool per_layer : {false, true}) {
    std::vector<ParamRef> ps = {{"fc.weight", torch::ones({4}).requires_grad_(true), false},
                                {"fc.bias", torch::ones({2}).requires_grad_(true), true},
                                {"out.weight", torch::ones({3}).requires_grad_(true), false}};
    OptimizerOptions o;
    o.name = "ags";
    o.ags.bounded = false;
    o.ags.use_trust = false;
    o.ags.use_trend = false;
    o.ags.per_layer = per_layer;
    AGS ags(ps, o, /*reference_batch=*/64);
    const std::vector<double> global = {4.0, 2.0, 3.0}, local = {4.0 * 6, 2.0, 3.0 * 3};
    for (int step = 0; step < 3; ++step) {
      for (auto& p : ps) p.param.mutable_grad() = torch::full_like(p.param, 0.01);
      StepStats st;
      st.local_batch = 128;
      st.global_batch = 1024;
      st.global_grad_sq_per_tensor = global;
      st.local_grad_sq_per_tensor = local;
      ags.step(st);
    }
    const auto& f = ags.factors();
    if (per_layer) {
      const double layer = expected_gain({4.0, 2.0}, {4.0 * 6, 2.0}, 128, 1024, 64);
      EXPECT_NEAR(f[0], layer, 1e-9);
      EXPECT_NEAR(f[1], layer, 1e-9);
    } else {
      EXPECT_NEAR(f[0], expected_gain({4.0}, {4.0 * 6}, 128, 1024, 64), 1e-9);
      EXPECT_NEAR(f[1], 1.0, 1e-9);  // no noise in the bias: a large batch buys it nothing
    }
    EXPECT_NEAR(f[2], expected_gain({3.0}, {3.0 * 3}, 128, 1024, 64), 1e-9);  // a layer of one tensor
  }
}

TEST(AGS, PerLayerTrustIsTheWeightsAndTheBiasFollowsIt) {
  auto ps = std::vector<ParamRef>{{"a.weight", torch::full({8}, 2.0).requires_grad_(true), false},
                                  {"a.bias", torch::ones({2}).requires_grad_(true), true},
                                  {"b.weight", torch::full({8}, 0.5).requires_grad_(true), false}};
  OptimizerOptions o;
  o.name = "ags";
  o.ags.bounded = false;
  o.ags.use_noise = false;
  o.ags.use_trend = false;
  o.ags.trust_exponent = 1.0;
  o.ags.per_layer = true;
  o.lr = 1e-12;  // the weights stay put, so the trust ratios are those of the initial weights
  o.weight_decay = 0;
  AGS ags(ps, o, 64);
  for (int step = 0; step < 2; ++step) {
    for (auto& p : ps) p.param.mutable_grad() = torch::ones_like(p.param);
    StepStats st;
    st.local_batch = st.global_batch = 64;
    ags.step(st);
  }
  // tau_a = |w_a| / |g_a| = 2, tau_b = 0.5 (biases are left out of tau), geometric mean 1.
  EXPECT_NEAR(ags.factors()[0], 2.0, 1e-6);
  EXPECT_NEAR(ags.factors()[1], 2.0, 1e-6);
  EXPECT_NEAR(ags.factors()[2], 0.5, 1e-6);
}

TEST(AGS, AdamDirectionWithUnitFactorsIsAdamWithDecoupledDecay) {
  // Every statistic off and no clipping: s_p = 1, so each tensor takes Adam's
  // step, with weight decay added to the weights' steps (not the bias's).
  auto ps = three_tensors();
  std::vector<torch::Tensor> w, m, v;
  for (auto& p : ps) {
    w.push_back(p.param.detach().clone());
    m.push_back(torch::zeros_like(p.param));
    v.push_back(torch::zeros_like(p.param));
  }
  OptimizerOptions o;
  o.name = "ags";
  o.lr = 0.01;
  o.weight_decay = 0.01;
  o.ags.direction = "adam";
  o.ags.bounded = false;
  o.ags.use_noise = o.ags.use_trust = o.ags.use_trend = false;
  AGS ags(ps, o, 64);
  for (int t = 1; t <= 3; ++t) {
    fill_grads(ps, 1.0);
    ags.step(StepStats{});
    for (size_t i = 0; i < ps.size(); ++i) {
      const auto& g = ps[i].param.grad();
      m[i] = o.momentum * m[i] + (1 - o.momentum) * g;
      v[i] = o.ags.adam.beta2 * v[i] + (1 - o.ags.adam.beta2) * g * g;
      auto u = (m[i] / (1 - std::pow(o.momentum, t))) / ((v[i] / (1 - std::pow(o.ags.adam.beta2, t))).sqrt() + o.ags.adam.eps);
      if (!ps[i].is_bias_or_norm) u = u + o.weight_decay * w[i];
      w[i] = w[i] - o.lr * u;
      ASSERT_TRUE(torch::allclose(ps[i].param.detach(), w[i], 1e-5, 1e-6)) << "tensor " << i << " step " << t;
    }
  }
}

TEST(AGS, AdamDirectionTrustIsAgainstTheStepNorm) {
  // Adam's step has |u| = sqrt(n) per tensor whatever the gradient's scale,
  // so the trust term compares |w| / sqrt(n) between tensors: a weight of 2s
  // against one of 0.5s (same size) gives trust 2 and 0.5 at exponent 1.
  auto ps = std::vector<ParamRef>{{"a.weight", torch::full({8}, 2.0).requires_grad_(true), false},
                                  {"b.weight", torch::full({8}, 0.5).requires_grad_(true), false}};
  OptimizerOptions o;
  o.name = "ags";
  o.ags.direction = "adam";
  o.ags.bounded = false;
  o.ags.use_noise = o.ags.use_trend = false;
  o.ags.trust_exponent = 1.0;
  o.lr = 1e-12;
  o.weight_decay = 0;
  AGS ags(ps, o, 64);
  for (int step = 0; step < 2; ++step) {
    ps[0].param.mutable_grad() = torch::full({8}, 100.0);  // gradients of very different scale
    ps[1].param.mutable_grad() = torch::full({8}, 0.01);
    ags.step(StepStats{});
  }
  EXPECT_NEAR(ags.factors()[0], 2.0, 1e-4);
  EXPECT_NEAR(ags.factors()[1], 0.5, 1e-4);
}

TEST(AGS, AdamDirectionStateSurvivesSaveAndLoad) {
  // A run resumed from a checkpoint takes the same steps as one never stopped:
  // the moments and the smoothed statistics all come back.
  OptimizerOptions o;
  o.name = "ags";
  o.lr = 0.01;
  o.ags.direction = "adam";
  auto a_params = three_tensors();
  AGS a(a_params, o, 64);
  std::vector<torch::Tensor> ws;
  for (auto& p : a_params) ws.push_back(p.param);
  for (int step = 0; step < 3; ++step) {
    fill_grads(a_params, 1.0);
    a.step(stats_for(ws, 128, 1024, 2.0));
  }
  torch::serialize::OutputArchive out;
  a.save(out);
  std::stringstream buffer;
  out.save_to(buffer);
  std::vector<ParamRef> b_params;
  for (auto& p : a_params) b_params.push_back({p.name, p.param.detach().clone().requires_grad_(true), p.is_bias_or_norm});
  AGS b(b_params, o, 64);
  torch::serialize::InputArchive in;
  in.load_from(buffer);
  b.load(in);
  std::vector<torch::Tensor> b_ws;
  for (auto& p : b_params) b_ws.push_back(p.param);
  for (int step = 0; step < 2; ++step) {
    fill_grads(a_params, 1.0);
    for (size_t i = 0; i < a_params.size(); ++i) b_params[i].param.mutable_grad() = a_params[i].param.grad().clone();
    a.step(stats_for(ws, 128, 1024, 2.0));
    b.step(stats_for(b_ws, 128, 1024, 2.0));
  }
  for (size_t i = 0; i < a_params.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a_params[i].param, b_params[i].param)) << i;
    EXPECT_DOUBLE_EQ(a.factors()[i], b.factors()[i]) << i;
  }
}

TEST(AGS, AdamDirectionRefusesNesterov) {
  OptimizerOptions o;
  o.name = "ags";
  o.ags.direction = "adam";
  o.nesterov = true;
  EXPECT_THROW(o.validate(), std::invalid_argument);
  o.nesterov = false;
  o.ags.direction = "rmsprop";
  EXPECT_THROW(o.validate(), std::invalid_argument);
}

TEST(AGS, RejectsInvertedOrNonPositiveBounds) {
  OptimizerOptions o;
  o.name = "ags";
  o.ags.s_min = 3;
  o.ags.s_max = 2;
  EXPECT_THROW(AGS(three_tensors(), o, 128), std::invalid_argument);
  o.ags.s_min = 0;
  o.ags.s_max = 2;
  EXPECT_THROW(AGS(three_tensors(), o, 128), std::invalid_argument);
}

TEST(MakeOptimizer, KnowsEveryNameAndRejectsOthers) {
  for (const auto& name : optimizer_names()) {
    OptimizerOptions options;
    options.name = name;
    EXPECT_EQ(make_optimizer(three_tensors(), options, 128)->name(), name);
  }
  OptimizerOptions bad;
  bad.name = "adagrad9";
  try {
    make_optimizer(three_tensors(), bad, 128);
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("adagrad9"), std::string::npos);
  }
}

TEST(LrRules, LinearSqrtAndLegw) {
  ScheduleOptions base;
  base.kind = "constant";
  base.base_lr = 0.1;
  base.warmup_epochs = 1;
  base.total_epochs = 50;
  EXPECT_DOUBLE_EQ(scaled_schedule(base, {"linear", 128, false}, 1024).base_lr, 0.8);
  EXPECT_NEAR(scaled_schedule(base, {"sqrt", 128, true}, 512).base_lr, 0.2, 1e-12);
  EXPECT_DOUBLE_EQ(scaled_schedule(base, {"sqrt", 128, true}, 512).warmup_epochs, 4.0);
  EXPECT_DOUBLE_EQ(scaled_schedule(base, {"none", 128, false}, 8192).base_lr, 0.1);
  EXPECT_THROW(validate(LrScaling{"cubic", 128, false}), std::invalid_argument);
}

TEST(LrRules, BatchScheduleParsesAndRejectsNonsense) {
  auto s = BatchSchedule::parse("0:256,5:1024");
  EXPECT_EQ(s.global_batch_at(0, 64), 256);
  EXPECT_EQ(s.global_batch_at(4, 64), 256);
  EXPECT_EQ(s.global_batch_at(7, 64), 1024);
  EXPECT_EQ(BatchSchedule::parse("3:512").global_batch_at(1, 64), 64);
  for (const std::string bad : {"", "0-256", "0:256,0:512", "5:256,2:512", "0:0", "0:12x", "-1:64"}) {
    EXPECT_THROW(BatchSchedule::parse(bad), std::invalid_argument) << bad;
  }
}

TEST(LrRules, TransitionMovesGraduallyToTheNewRate) {
  LrTransition t;
  t.from.kind = t.to.kind = "constant";
  t.from.base_lr = 0.1;
  t.to.base_lr = 0.5;
  t.start_step = 100;
  t.window = 4;
  EXPECT_DOUBLE_EQ(t.learning_rate(100, 3.0), 0.1);
  EXPECT_DOUBLE_EQ(t.learning_rate(102, 3.0), 0.3);
  EXPECT_DOUBLE_EQ(t.learning_rate(104, 3.0), 0.5);
  t.window = 0;
  EXPECT_DOUBLE_EQ(t.learning_rate(100, 3.0), 0.5);
}

}  // namespace
}  // namespace tula::optim
