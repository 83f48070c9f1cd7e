#include "predict/noise_scale.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "helpers/expect_error.hpp"
#include "predict/error.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

TEST(NoiseScale, PerStepEstimatorsAreExactWithoutSamplingNoise) {
  // E|g_b|^2 = |G|^2 + tr/b: feed the expectations and get |G|^2, tr back.
  const double g2 = 2.0, tr = 800, b = 32, B = 128;
  NoiseSample s{1, 32, 128, g2 + tr / b, g2 + tr / B};
  double eg = 0, et = 0;
  ASSERT_TRUE(step_estimates(s, eg, et));
  EXPECT_NEAR(eg, g2, 1e-9);
  EXPECT_NEAR(et, tr, 1e-6);
  NoiseSample single{1, 32, 32, 3, 3};
  EXPECT_FALSE(step_estimates(single, eg, et));
}

TEST(NoiseScale, RecoversAKnownNoiseScaleFromSimulatedGradients) {
  // |G|^2 = 1, tr(Sigma) = 500: B_noise = 500; 4 workers at b = 32 (B = 128).
  const auto samples = test::simulate_gradient_norms(1.0, 500, 64, 4, 32, 600, 42);
  const auto e = estimate_noise_scale(samples);
  EXPECT_NEAR(e.b_noise, 500, 3 * e.se);
  EXPECT_GT(e.se, 0);
  EXPECT_LT(e.se, 0.25 * 500);
  EXPECT_NEAR(e.g2, 1.0, 0.2);
  EXPECT_EQ(e.steps, 300);  // the later half
  EXPECT_EQ(e.dof, 9);
}

TEST(NoiseScale, JackknifeErrorIsHonest) {
  int covered = 0;
  const int runs = 100;
  for (int s = 0; s < runs; ++s) {
    const auto samples = test::simulate_gradient_norms(1.0, 300, 32, 4, 16, 300, 9000 + s);
    const auto e = estimate_noise_scale(samples);
    const double t = student_t_quantile(0.975, e.dof);
    covered += std::abs(e.b_noise - 300) <= t * e.se;
  }
  EXPECT_GE(covered, 85);
}

TEST(NoiseScale, UsesTheLaterHalfOfEachPilotRun) {
  // Two runs one after the other, each with a noise scale that quadruples
  // half-way (100 then 400): the estimate is the later halves' 400, and the
  // second run's early half is dropped as well as the first's.
  std::vector<NoiseSample> samples;
  for (int run = 0; run < 2; ++run) {
    for (int step = 1; step <= 40; ++step) {
      const double tr = step <= 20 ? 100 : 400;  // |G|^2 = 1, b = 32, B = 128
      samples.push_back({step, 32, 128, 1 + tr / 32, 1 + tr / 128});
    }
  }
  const auto e = estimate_noise_scale(samples);
  EXPECT_EQ(e.steps, 40);
  EXPECT_NEAR(e.b_noise, 400, 1e-6);
  NoiseOptions all;
  all.skip_fraction = 0;
  EXPECT_NEAR(estimate_noise_scale(samples, all).b_noise, 250, 1e-6);
}

TEST(NoiseScale, MovingAverageTraceSettlesNearTheTruth) {
  const auto samples = test::simulate_gradient_norms(1.0, 200, 64, 8, 32, 2000, 5);
  const auto trace = noise_scale_trace(samples, 0.99);
  ASSERT_EQ(trace.size(), samples.size());
  EXPECT_NEAR(trace.back().b_noise_ema, 200, 60);
}

TEST(NoiseScale, OneWorkerGivesNoEstimate) {
  std::vector<NoiseSample> s(50, NoiseSample{1, 64, 64, 2.0, 2.0});
  tula::testing::expect_error<FitError>([&] { estimate_noise_scale(s); }, {"2 or more workers"});
}

TEST(NoiseScale, NoiseSwampingTheSignalIsAClearError) {
  // Per-step |G|^2 estimates of +30 and -31 in turn around a true |G|^2 of
  // about zero (tr(Sigma) = 1000, b = 8, B = 16): noise far larger than the
  // signal, and a mean of -0.5 over any run of whole pairs of steps.
  std::vector<NoiseSample> samples;
  for (int step = 1; step <= 40; ++step) {
    const double g2 = step % 2 == 1 ? 30 : -31, tr = 1000;
    samples.push_back({step, 8, 16, g2 + tr / 8, g2 + tr / 16});
  }
  tula::testing::expect_error<FitError>([&] { estimate_noise_scale(samples); }, {"swamps the signal"});
}

TEST(NoiseScale, ReadsTheEnginesMetricsLines) {
  std::istringstream in(
      "{\"type\":\"start\",\"model\":\"resnet20\"}\n"
      "{\"type\":\"iter\",\"step\":1,\"global_batch\":256,\"workers\":4,\"local_grad_sq\":3.5,\"global_grad_sq\":1.25}\n"
      "\n"
      "{\"type\":\"epoch\",\"epoch\":0,\"test_accuracy\":0.8}\n"
      "{\"type\":\"iter\",\"step\":2,\"global_batch\":256,\"workers\":4,\"local_grad_sq\":3.0,\"global_grad_sq\":1.0}\n");
  const auto s = read_noise_samples(in);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].local_batch, 64);
  EXPECT_EQ(s[0].global_batch, 256);
  EXPECT_DOUBLE_EQ(s[1].local_grad_sq, 3.0);
  std::istringstream bad("{\"type\":\"iter\"\n");
  EXPECT_THROW(read_noise_samples(bad), ProfileError);
}

TEST(NoiseScale, AProbedLoneWorkerGivesASampleAtItsProbesBatch) {
  std::istringstream in(
      "{\"type\":\"iter\",\"step\":1,\"global_batch\":128,\"workers\":1,\"local_grad_sq\":3.5,"
      "\"global_grad_sq\":1.25,\"probe_batch\":64}\n"
      "{\"type\":\"iter\",\"step\":2,\"global_batch\":128,\"workers\":1,\"local_grad_sq\":1.5,"
      "\"global_grad_sq\":1.5}\n");
  const auto s = read_noise_samples(in);
  ASSERT_EQ(s.size(), 1u) << "the unprobed step of a lone worker has one batch size";
  EXPECT_EQ(s[0].step, 1);
  EXPECT_EQ(s[0].local_batch, 64);
  EXPECT_EQ(s[0].global_batch, 128);
  EXPECT_DOUBLE_EQ(s[0].local_grad_sq, 3.5);
}

}  // namespace
}  // namespace tula::predict
