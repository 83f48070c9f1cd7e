// The input pipeline's model: the loader's rate and the share of it a step
// waits for, recovered from profiles generated with known values; and what
// the predictor makes of them (input_model.hpp).
#include "predict/input_model.hpp"

#include <gtest/gtest.h>

#include <random>

#include "predict/fit.hpp"
#include "predict/predictor.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

struct InputTruth {
  double seconds_per_sample = 0.0004;  // one loader
  double exposed = 1.0;                // rho
  int64_t threads = 2;
  int64_t batch = 64;
  double noise = 0.03;
};

// A profile of `t` with the loader timed alone and in steps it fed.
Profile with_input(const test::Truth& t, const InputTruth& in, uint64_t seed, int64_t cores = 2) {
  Profile p = test::make_profile(t, seed);
  p.hardware.cores = cores;
  std::mt19937_64 rng(seed + 7);
  std::normal_distribution<double> normal;
  auto noisy = [&](double v) { return v * std::exp(in.noise * normal(rng)); };
  const double b = static_cast<double>(in.batch);
  LoaderSample l{in.batch, in.threads, {}};
  for (int i = 0; i < 8; ++i) l.seconds.push_back(noisy(b * in.seconds_per_sample));
  p.loader.push_back(l);
  const double t_c = test::true_compute(t, b) + t.t_opt;
  InputStepSample s{in.batch, {}, {}};
  for (int i = 0; i < 6; ++i) s.step_s.push_back(noisy(t_c + in.exposed * b * in.seconds_per_sample));
  p.input_steps.push_back(s);
  return p;
}

MachineSpec cpu_node(int64_t cores) {
  MachineSpec m;
  m.device_kind = "cpu";
  m.max_workers_per_node = cores;
  m.device_memory_bytes = int64_t{64} << 30;
  m.price_per_hour = 1;
  return m;
}

TEST(InputModel, RecoversTheLoadersRateAndTheShareWaitedFor) {
  const test::Truth t;
  for (const double rho : {0.0, 0.6, 1.0, 1.3}) {
    InputTruth in;
    in.exposed = rho;
    const auto p = with_input(t, in, 11);
    const auto m = fit_profile(p).input;
    ASSERT_TRUE(m.measured);
    EXPECT_NEAR(m.params.value(0), in.seconds_per_sample, 0.05 * in.seconds_per_sample) << "rho " << rho;
    EXPECT_NEAR(m.params.value(1), rho, 0.15) << "the share waited for";
    EXPECT_GT(m.params.se(0), 0);
    EXPECT_EQ(m.threads, 2);
    EXPECT_EQ(m.cores, 2);
  }
}

TEST(InputModel, WithoutLoaderSamplesTheInputCostsNothingAndSaysSo) {
  const test::Truth t;
  const auto p = test::make_profile(t, 12);
  const auto fitted = fit_profile(p);
  EXPECT_FALSE(fitted.input.measured);
  const Predictor pred(fitted, p);
  const auto r = pred.point({1, 1, 64, 1}, profiled_machine(p));
  EXPECT_EQ(r.input_s, 0);
  EXPECT_EQ(r.input_wait_s, 0);
  bool noted = false;
  for (const auto& a : pred.assumptions()) noted = noted || a.find("costs nothing") != std::string::npos;
  EXPECT_TRUE(noted);
}

// A loader far faster than the step: its time is within the steps' noise, and
// the ratio that measures rho must not blow a noisy millisecond up.
TEST(InputModel, AShareOutsideItsBoundsIsHeldThereWithANote) {
  const test::Truth t;
  InputTruth in;
  in.seconds_per_sample = 1e-6;
  auto p = with_input(t, in, 17);
  for (auto& s : p.input_steps[0].step_s) s += 0.002;  // 2 ms of noise against 64 us of loading
  const auto m = fit_profile(p).input;
  EXPECT_EQ(m.params.value(1), kMaxExposed);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes.back().find("held at the bound"), std::string::npos) << m.notes.back();
}

TEST(InputModel, LoaderSamplesWithoutStepsAreTakenAsNotHidden) {
  const test::Truth t;
  auto p = with_input(t, {}, 13);
  p.input_steps.clear();
  const auto m = fit_profile(p).input;
  EXPECT_TRUE(m.measured);
  EXPECT_EQ(m.params.value(1), 1.0);
  ASSERT_FALSE(m.notes.empty());
}

TEST(InputModel, AStepTakesComputePlusTheWaitedShareButNeverLessThanTheLoader) {
  EXPECT_DOUBLE_EQ(InputModel::wait(0.04, 0.02, 1.0), 0.02);   // take turns: all of it
  EXPECT_DOUBLE_EQ(InputModel::wait(0.04, 0.02, 0.0), 0.0);    // hidden behind compute
  EXPECT_DOUBLE_EQ(InputModel::wait(0.01, 0.05, 0.0), 0.04);   // hidden, yet the loader bounds the step
  EXPECT_DOUBLE_EQ(InputModel::wait(0.04, 0.02, 1.5), 0.03);   // decoding also slows compute
}

// The point of the model: on a node whose cores are all busy decoding, a
// second worker brings no more decoding, so an input-bound job is not
// faster with two workers there; on two nodes it is.
TEST(InputModel, MoreWorkersOnTheSameCoresDoNotHelpAnInputBoundJob) {
  test::Truth t;
  t.gamma = 0.9;  // two workers on two cores: each computes at about half speed
  InputTruth in;
  in.seconds_per_sample = 0.004;  // far slower than compute: input-bound
  auto p = with_input(t, in, 14);
  test::SyntheticOptions o;
  o.contention = true;
  const auto contention = test::make_profile(t, 14, o).compute;
  p.compute = contention;
  PredictorOptions po;
  po.calibrate_to_pilot = false;
  const auto pred = Predictor::from_profile(p, po);
  const auto node = cpu_node(2);
  const double one = pred.point({1, 1, 64, 1}, node).epoch_s;
  const double two_here = pred.point({1, 2, 64, 1}, node).epoch_s;
  const double two_nodes = pred.point({2, 1, 64, 1}, node).epoch_s;
  EXPECT_GE(two_here, 0.95 * one) << "a second worker on the same two cores";
  EXPECT_LT(two_nodes, 0.6 * one) << "a second node decodes on cores of its own";

  // Where one loader's threads leave cores free, a second loader adds decoding.
  const double wide_one = pred.point({1, 1, 64, 1}, cpu_node(8)).input_s;
  const double wide_two = pred.point({1, 2, 64, 1}, cpu_node(8)).input_s;
  EXPECT_NEAR(wide_two, wide_one, 1e-12) << "8 cores, 2 threads per loader: two loaders in parallel";
}

TEST(InputModel, TheInputIsPricedIntoIterationsAndEvaluation) {
  const test::Truth t;
  const InputTruth in;
  const auto with = with_input(t, in, 15);
  auto without = with;
  without.loader.clear();
  without.input_steps.clear();
  PredictorOptions po;
  po.calibrate_to_pilot = false;
  const auto a = Predictor::from_profile(with, po).point({1, 1, 64, 1}, profiled_machine(with));
  const auto b = Predictor::from_profile(without, po).point({1, 1, 64, 1}, profiled_machine(without));
  EXPECT_NEAR(a.input_s, 64 * in.seconds_per_sample, 0.05 * 64 * in.seconds_per_sample);
  EXPECT_NEAR(a.iteration_s - b.iteration_s, a.input_wait_s, 1e-12);
  EXPECT_NEAR(a.eval_s - b.eval_s, static_cast<double>(t.test) * in.seconds_per_sample,
              0.05 * static_cast<double>(t.test) * in.seconds_per_sample)
      << "the test set is decoded as it is evaluated";
}

TEST(InputModel, ItsFitIsWrittenAndReadBackAsItWas) {
  const auto p = with_input(test::Truth{}, {}, 16);
  const auto m = fit_profile(p);
  const auto back = fitted_from_json(to_json(m));
  EXPECT_EQ(back.input.measured, m.input.measured);
  EXPECT_DOUBLE_EQ(back.input.params.value(0), m.input.params.value(0));
  EXPECT_DOUBLE_EQ(back.input.params.value(1), m.input.params.value(1));
  EXPECT_EQ(back.input.threads, m.input.threads);

  const auto reread = profile_from_json(to_json(p));
  ASSERT_EQ(reread.loader.size(), 1u);
  EXPECT_EQ(reread.loader[0].threads, 2);
  EXPECT_EQ(reread.loader[0].seconds, p.loader[0].seconds);
  ASSERT_EQ(reread.input_steps.size(), 1u);
  EXPECT_EQ(reread.input_steps[0].step_s, p.input_steps[0].step_s);
  EXPECT_FALSE(to_json(test::make_profile(test::Truth{}, 16))["samples"].contains("loader"))
      << "a profile without them is written as before";
}

}  // namespace
}  // namespace tula::predict
