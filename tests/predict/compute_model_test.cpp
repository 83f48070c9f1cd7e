#include "predict/compute_model.hpp"

#include <gtest/gtest.h>

#include "predict/error.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

TEST(ComputeModel, RecoversALinearModelWithinItsStatedUncertainty) {
  test::Truth t;
  const auto m = fit_compute(test::make_profile(t, 3).compute);
  EXPECT_EQ(m.shape, ComputeShape::Linear);
  EXPECT_NEAR(m.params["a"], t.a, 3 * m.params.se("a"));
  EXPECT_NEAR(m.params["c"], t.c, 3 * m.params.se("c"));
  EXPECT_GT(m.params.se("c"), 0);
  EXPECT_NEAR(m.optimizer["t_opt"], t.t_opt, 3 * m.optimizer.se("t_opt"));
}

// Over many noisy profiles the 95% intervals must cover the truth about 95% of
// the time: the stated uncertainty is neither too small nor too large.
TEST(ComputeModel, NinetyFivePercentIntervalsCoverTheTruth) {
  const test::Truth t;
  const int runs = 300;
  const auto covered = test::interval_coverage(
      t, runs, 1000, [](const Profile& p) { return fit_compute(p.compute).params; }, {{"a", t.a}, {"c", t.c}});
  for (const char* name : {"a", "c"}) {
    EXPECT_GE(covered.at(name), 0.89 * runs) << name;
    EXPECT_LE(covered.at(name), 0.995 * runs) << name;
  }
}

TEST(ComputeModel, ChoosesTheSaturatingShapeForAGpuLikeDevice) {
  test::Truth t;
  t.a = 0.010;    // flat at 10 ms ...
  t.b_sat = 32;   // ... until 32 samples, then 0.3 ms per sample
  t.c = 0.0003;
  test::SyntheticOptions o;
  o.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  const auto m = fit_compute(test::make_profile(t, 5, o).compute);
  ASSERT_EQ(m.shape, ComputeShape::Saturating);
  EXPECT_LT(m.loo_saturating, m.loo_linear);
  EXPECT_GE(m.b_sat, 16);
  EXPECT_LE(m.b_sat, 64);
  EXPECT_NEAR(m.forward_backward(4), 0.010, 0.001);
  EXPECT_NEAR(m.forward_backward(512), true_compute(t, 512), 0.05 * true_compute(t, 512));
}

TEST(ComputeModel, KeepsTheLinearShapeWhenTheDataAreLinear) {
  test::SyntheticOptions o;
  o.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256};
  const auto m = fit_compute(test::make_profile({}, 9, o).compute);
  EXPECT_EQ(m.shape, ComputeShape::Linear);
  EXPECT_GE(m.loo_saturating, 0);  // it was tried
}

std::vector<ComputeSample> samples(const std::vector<std::pair<int64_t, double>>& bt) {
  std::vector<ComputeSample> out;
  for (const auto& [b, t] : bt) out.push_back({b, 1, {t, t * 1.01, t * 0.99}, {}, {}});
  return out;
}

TEST(ComputeModel, ASignificantNegativeSlopeIsAnError) {
  try {
    fit_compute(samples({{1, 0.50}, {8, 0.40}, {64, 0.20}, {128, 0.05}}));
    FAIL() << "expected FitError";
  } catch (const FitError& e) {
    EXPECT_NE(std::string(e.what()).find("falls as the batch grows"), std::string::npos);
  }
}

TEST(ComputeModel, ANegativeSlopeWithinNoiseFallsBackToFlat) {
  const auto m = fit_compute(samples({{1, 0.100}, {2, 0.104}, {4, 0.096}, {8, 0.099}}));
  EXPECT_EQ(m.params["c"], 0.0);
  EXPECT_NEAR(m.params["a"], 0.1, 0.005);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.front().find("flat model"), std::string::npos);
}

TEST(ComputeModel, TooFewBatchSizesIsAnError) {
  EXPECT_THROW(fit_compute(samples({{1, 0.1}, {2, 0.2}})), FitError);
  EXPECT_THROW(fit_compute(samples({{4, 0.1}, {4, 0.11}, {4, 0.09}})), FitError);
}

TEST(ComputeModel, FitsContentionFromSeveralWorkersPerNode) {
  test::Truth t;
  t.gamma = 0.6;
  test::SyntheticOptions o;
  o.contention = true;
  const auto m = fit_compute(test::make_profile(t, 11, o).compute);
  EXPECT_TRUE(m.contention_measured);
  EXPECT_NEAR(m.contention["gamma_k2"], 0.6, 3 * m.contention.se("gamma_k2") + 0.01);
  const auto none = fit_compute(test::make_profile({}, 11).compute);
  EXPECT_FALSE(none.contention_measured);
  EXPECT_EQ(none.contention["gamma"], 0.0);
}

// A CPU node: a second worker halves each one's threads (slowdown 1.8),
// four workers on two cores time-share them (slowdown 4); no straight line
// in k passes through both.
TEST(ComputeModel, ContentionHasOneSlowdownPerMeasuredWorkerCount) {
  std::vector<ComputeSample> s = samples({{4, 0.010}, {16, 0.040}, {64, 0.160}, {256, 0.640}});
  for (const auto& [k, slowdown] : {std::pair<int64_t, double>{2, 1.8}, {4, 4.0}}) {
    for (const int64_t b : {16, 64}) {
      ComputeSample c;
      c.batch_per_worker = b;
      c.workers_per_node = k;
      c.forward_backward_s = {0.0025 * static_cast<double>(b) * slowdown};
      s.push_back(c);
    }
  }
  const auto m = fit_compute(s);
  ASSERT_EQ(m.contention_at, (std::vector<double>{2, 4}));
  EXPECT_NEAR(m.contention["gamma_k2"], 0.8, 1e-6);
  EXPECT_NEAR(m.contention["gamma_k4"], 1.0, 1e-6);
  EXPECT_NEAR(m.contention_factor(1), 1.0, 1e-9);
  EXPECT_NEAR(m.contention_factor(2), 1.8, 1e-6);
  EXPECT_NEAR(m.contention_factor(3), 2.9, 1e-6);  // halfway between the measured counts
  EXPECT_NEAR(m.contention_factor(4), 4.0, 1e-6);
  EXPECT_NEAR(m.contention_factor(8), 8.0, 1e-6);  // beyond: the last count's gamma
  const auto back = compute_model_from_json(to_json(m), "fitted.compute");
  EXPECT_EQ(back.contention_at, m.contention_at);
  EXPECT_NEAR(back.contention_factor(3), 2.9, 1e-6);
}

TEST(ComputeModel, JsonRoundTrips) {
  const auto m = fit_compute(test::make_profile({}, 2).compute);
  const auto back = compute_model_from_json(to_json(m), "fitted.compute");
  EXPECT_EQ(back.shape, m.shape);
  EXPECT_DOUBLE_EQ(back.params["c"], m.params["c"]);
  EXPECT_EQ(back.notes, m.notes);
}

}  // namespace
}  // namespace tula::predict
