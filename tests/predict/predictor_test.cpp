#include "predict/predictor.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "predict/error.hpp"
#include "predict/report.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

// What the truth says one configuration takes, by the same formulas written out.
struct Expected {
  double iteration, epoch, steps, time;
};
Expected expected(const test::Truth& t, int64_t n, int64_t b, int64_t k) {
  const double tc = true_compute(t, static_cast<double>(b));
  const double iter = (k - 1) * tc + true_overlapped(t, static_cast<double>(n), tc) + t.t_opt;
  const double per_rank = std::ceil(static_cast<double>(t.train) / n);
  const double iters = std::ceil(std::ceil(per_rank / b) / k);
  const double eval = t.e0 + t.e1 * std::ceil(static_cast<double>(t.test) / n);
  const double B = static_cast<double>(n * b * k);
  const double steps = t.s_min * (1 + t.b_noise / B);
  return {iter, iters * iter + eval, steps, steps * iter + steps / iters * eval};
}

// The profile's first pilot, given the layout of `c` (one node) to be timed at.
PilotRun& pilot_laid_out_as(Profile& profile, const Config& c) {
  auto& pilot = profile.pilots.front();
  pilot.global_batch = c.global_batch();
  pilot.workers = c.workers();
  pilot.batch_per_worker = c.batch_per_worker;
  return pilot;
}

// The same on `c`'s nodes of `machine`.
PilotRun& pilot_on_nodes(Profile& profile, const Config& c, const MachineSpec& machine) {
  auto& pilot = pilot_laid_out_as(profile, c);
  pilot.nodes = c.nodes;
  pilot.machine = machine;
  return pilot;
}

TEST(Predictor, PredictsWhatTheTruthSaysWithIntervals) {
  test::Truth t;
  const auto profile = test::make_profile(t, 41);
  const auto pred = Predictor::from_profile(profile);
  const auto machine = profiled_machine(profile);
  ASSERT_TRUE(pred.to_target());
  for (const Config c : {Config{1, 1, 32, 1}, Config{1, 4, 64, 1}, Config{1, 2, 16, 4}}) {
    const auto p = pred.predict(c, machine);
    const auto e = expected(t, c.workers(), c.batch_per_worker, c.accumulation_steps);
    EXPECT_NEAR(p.per_step.iteration_s.estimate, e.iteration, 0.05 * e.iteration)
        << c.workers() << "x" << c.batch_per_worker;
    EXPECT_NEAR(p.epoch_s.estimate, e.epoch, 0.05 * e.epoch);
    EXPECT_NEAR(p.steps.estimate, e.steps, 0.15 * e.steps);
    EXPECT_NEAR(p.time_s.estimate, e.time, 0.15 * e.time);
    for (const auto* i : {&p.per_step.iteration_s, &p.epoch_s, &p.time_s, &p.memory_bytes, &p.steps}) {
      EXPECT_LE(i->lo, i->estimate);
      EXPECT_GE(i->hi, i->estimate);
      EXPECT_LT(i->lo, i->hi);
    }
    EXPECT_EQ(p.global_batch, c.global_batch());
    EXPECT_EQ(p.cost.estimate, 0.0);  // the profiled machine has no price
  }
}

// `tula tune` reads its validation split every --eval-every-epochs (0.25 by
// default): the time to the target counts every one of those passes.
TEST(Predictor, EveryEvaluationOfAnEpochIsCountedInItsTime) {
  test::Truth t;
  const auto profile = test::make_profile(t, 43);
  const auto machine = profiled_machine(profile);
  const Config c{1, 2, 32, 1};
  PredictorOptions four;
  four.evaluations_per_epoch = 4;
  PredictorOptions none;
  none.evaluations_per_epoch = 0;
  const auto once = Predictor::from_profile(profile).point(c, machine);
  const auto quarterly = Predictor::from_profile(profile, four).point(c, machine);
  const auto never = Predictor::from_profile(profile, none).point(c, machine);
  ASSERT_GT(once.eval_s, 0);
  EXPECT_NEAR(quarterly.eval_s, once.eval_s, 1e-12) << "one pass is one pass";
  EXPECT_NEAR(quarterly.epoch_s, once.epoch_s + 3 * once.eval_s, 1e-9 * quarterly.epoch_s);
  EXPECT_NEAR(quarterly.time_s, once.time_s + 3 * once.epochs * once.eval_s, 1e-9 * quarterly.time_s);
  EXPECT_EQ(never.eval_s, 0);
  EXPECT_NEAR(never.time_s, once.time_s - once.epochs * once.eval_s, 1e-9 * once.time_s);
}

TEST(Predictor, ATestSplitReadAtTheEndAddsOnePassToTheTime) {
  test::Truth t;
  auto profile = test::make_profile(t, 41);
  const auto machine = profiled_machine(profile);
  const Config c{1, 2, 32, 1};
  const auto plain = Predictor::from_profile(profile).point(c, machine);
  EXPECT_EQ(plain.final_test_s, 0);
  profile.data.final_test_samples = profile.data.test_samples;  // the same samples once more
  const auto pred = Predictor::from_profile(profile);
  const auto with = pred.point(c, machine);
  EXPECT_NEAR(with.final_test_s, with.eval_s, 1e-12);
  EXPECT_NEAR(with.time_s, plain.time_s + with.eval_s, 1e-9 * with.time_s);
  EXPECT_NEAR(with.cost, plain.cost, 1e-12);  // the profiled machine has no price
  const auto p = pred.predict(c, machine);
  EXPECT_NEAR(p.final_test_s.estimate, with.final_test_s, 1e-12);
  EXPECT_TRUE(std::any_of(p.notes.begin(), p.notes.end(),
                          [](const std::string& n) { return n.find("one reading of") != std::string::npos; }));
}

TEST(Predictor, IterationIntervalsCoverTheTruthMostOfTheTime) {
  test::Truth t;
  int covered = 0;
  const int runs = 40;
  PredictorOptions o;
  o.draws = 200;
  for (int s = 0; s < runs; ++s) {
    const auto profile = test::make_profile(t, 7000 + s);
    const auto pred = Predictor::from_profile(profile, o);
    const auto p = pred.predict({1, 1, 48, 1}, profiled_machine(profile));
    const double truth = true_compute(t, 48) + t.t_opt;
    covered += p.per_step.iteration_s.lo <= truth && truth <= p.per_step.iteration_s.hi;
  }
  EXPECT_GE(covered, 33);  // 95% nominal; at least ~83% over 40 profiles
}

TEST(Predictor, MoreCpuWorkersThanCoresOnlyWhereTheProfileMeasuredThem) {
  test::Truth t;
  auto profile = test::make_profile(t, 43);
  ASSERT_EQ(profile.hardware.device.kind, "cpu");
  const int64_t cores = profile.hardware.cores;
  const auto pred = Predictor::from_profile(profile);
  EXPECT_THROW(pred.predict({1, cores * 2, 16, 1}, profiled_machine(profile)), InfeasibleError);
  // A contention sample at twice the cores (workers time-sharing them) makes that count predictable.
  ComputeSample oversubscribed = profile.compute.front();
  oversubscribed.workers_per_node = cores * 2;
  profile.compute.push_back(oversubscribed);
  EXPECT_EQ(profiled_machine(profile).max_workers_per_node, cores * 2);
  const auto p = Predictor::from_profile(profile).predict({1, cores * 2, 16, 1}, profiled_machine(profile));
  EXPECT_GT(p.per_step.iteration_s.estimate, 0);
}

TEST(Predictor, EpochTimeUsesTheEnginesIterationCount) {
  test::Truth t;
  const auto profile = test::make_profile(t, 42);
  const auto pred = Predictor::from_profile(profile);
  const auto r = pred.point({1, 3, 100, 1}, profiled_machine(profile));
  // ceil(60000 / 3) = 20000 per rank, ceil(20000 / 100) = 200 steps.
  EXPECT_EQ(r.iterations_per_epoch, 200);
  EXPECT_NEAR(r.epoch_s, 200 * r.iteration_s + r.eval_s, 1e-9);
}

TEST(Predictor, ABatchThatDoesNotFitSaysHowToAccumulate) {
  test::Truth t;
  const auto profile = test::make_profile(t, 43);
  const auto pred = Predictor::from_profile(profile);
  MachineSpec small;
  small.name = "small";
  small.device_memory_bytes = 1'000'000'000;  // about 115 samples fit
  const auto b_max = pred.max_batch_per_worker(small, 1);
  EXPECT_GT(b_max, 90);
  EXPECT_LT(b_max, 117);
  try {
    pred.predict({1, 1, 512, 1}, small);
    FAIL();
  } catch (const InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("accumulation steps"), std::string::npos);
  }
  const auto plan = pred.fit_to_memory(512, small, 1);
  EXPECT_LE(plan.micro_batch, b_max);
  EXPECT_GE(plan.micro_batch * plan.steps, 512);
  EXPECT_NO_THROW(pred.predict({1, 1, plan.micro_batch, plan.steps}, small));

  MachineSpec tiny = small;
  tiny.device_memory_bytes = 100'000'000;  // below the static memory
  EXPECT_EQ(pred.max_batch_per_worker(tiny, 1), 0);
  try {
    pred.predict({1, 1, 1, 1}, tiny);
    FAIL();
  } catch (const InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("not even a batch of 1"), std::string::npos);
  }
  EXPECT_THROW(pred.fit_to_memory(8, tiny, 1), InfeasibleError);
}

TEST(Predictor, CpuWorkersShareTheNodesMemory) {
  const auto profile = test::make_profile({}, 44);
  const auto pred = Predictor::from_profile(profile);
  MachineSpec m;
  m.devices_per_node = 1;
  m.max_workers_per_node = 8;
  m.device_memory_bytes = 8'000'000'000;
  EXPECT_DOUBLE_EQ(pred.memory_per_worker(m, 4), 2e9);
  EXPECT_GT(pred.max_batch_per_worker(m, 1), pred.max_batch_per_worker(m, 4));
  EXPECT_THROW(pred.predict({1, 9, 8, 1}, m), InfeasibleError);  // more workers than the node runs
  EXPECT_THROW(pred.predict({0, 1, 8, 1}, m), std::invalid_argument);
}

TEST(Predictor, ASlowerNetworkBetweenNodesSlowsOnlyMultiNodeSteps) {
  const auto profile = test::make_profile({}, 45);
  const auto pred = Predictor::from_profile(profile);
  MachineSpec fast = profiled_machine(profile), slow = fast;
  slow.network_gbps = 1;  // 125 MB/s against the profiled 1 GB/s
  slow.network_latency_s = 50e-6;
  slow.price_per_hour = 2;
  EXPECT_DOUBLE_EQ(pred.point({1, 2, 32, 1}, fast).iteration_s, pred.point({1, 2, 32, 1}, slow).iteration_s);
  EXPECT_GT(pred.point({2, 1, 32, 1}, slow).allreduce_s, 5 * pred.point({2, 1, 32, 1}, fast).allreduce_s);
  const auto r = pred.point({2, 1, 32, 1}, slow);
  EXPECT_NEAR(r.cost, r.time_s / 3600 * 2 * 2, 1e-12);  // time x nodes x price
}

// Across nodes on a type whose cores the allreduce's work shares, backward
// gives up that share of the allreduce's time even where the allreduce is
// hidden behind it; one node's steps are as profiled. Calibrated to a pilot on
// two such nodes, the compute factor no longer takes that share for compute,
// so the one-node step comes out shorter than without it.
TEST(Predictor, TheAllreducesWorkOnTheCoresSlowsOnlyMultiNodeSteps) {
  test::Truth t;
  auto profile = test::make_profile(t, 45);
  const auto pred = Predictor::from_profile(profile, {.calibrate_to_pilot = false});
  MachineSpec plain = profiled_machine(profile), shared = plain;
  plain.network_gbps = shared.network_gbps = 1;
  shared.allreduce_on_cores = 0.5;
  const Config one{1, 1, 64, 1}, two{2, 1, 64, 1};
  EXPECT_DOUBLE_EQ(pred.point(one, plain).iteration_s, pred.point(one, shared).iteration_s);
  const auto a = pred.point(two, plain), b = pred.point(two, shared);
  EXPECT_DOUBLE_EQ(b.allreduce_s, a.allreduce_s);
  EXPECT_NEAR(b.compute_s, a.compute_s + 0.5 * a.allreduce_s, 1e-12);
  EXPECT_GT(b.iteration_s, a.iteration_s);
  EXPECT_LE(b.iteration_s, a.iteration_s + 0.5 * a.allreduce_s + 1e-12);
  EXPECT_DOUBLE_EQ(b.eval_s, a.eval_s) << "evaluation has no allreduce";
  bool noted = false;
  for (const auto& n : pred.predict(two, shared).notes) noted |= n.find("allreduce_on_cores") != std::string::npos;
  EXPECT_TRUE(noted);

  // The same measured step on two nodes, read with and without the share.
  auto& pilot = pilot_on_nodes(profile, two, plain);
  pilot.seconds_per_step = 1.2 * a.iteration_s;
  const auto without = Predictor::from_profile(profile);
  pilot.machine = shared;
  const auto with = Predictor::from_profile(profile);
  EXPECT_NEAR(with.point(two, shared).iteration_s, pilot.seconds_per_step, 1e-6 * a.iteration_s);
  EXPECT_LT(with.compute_scale(), without.compute_scale());
  EXPECT_LT(with.point(one, shared).iteration_s, without.point(one, plain).iteration_s);
}

TEST(Predictor, WithoutAStatisticalModelPredictsFixedEpochs) {
  test::SyntheticOptions o;
  o.gradient_noise = false;
  o.pilot_batches.clear();
  const auto profile = test::make_profile({}, 46, o);
  PredictorOptions po;
  po.epochs = 3;
  const auto pred = Predictor::from_profile(profile, po);
  EXPECT_FALSE(pred.to_target());
  const auto p = pred.predict({1, 1, 32, 1}, profiled_machine(profile));
  EXPECT_NEAR(p.time_s.estimate, 3 * p.epoch_s.estimate, 1e-6 * p.time_s.estimate);
  bool noted = false;
  for (const auto& n : p.notes) noted |= n.find("3 epoch") != std::string::npos;
  EXPECT_TRUE(noted);
  const auto text = format_prediction(p);
  EXPECT_NE(text.find("time for 3 epoch"), std::string::npos);
}

TEST(Predictor, APilotsStepTimeCalibratesTheComputeTimes) {
  test::Truth t;
  auto profile = test::make_profile(t, 48);
  const auto machine = profiled_machine(profile);
  const Config pilot_config{1, 2, 64, 1};
  const double profiled = Predictor::from_profile(profile).point(pilot_config, machine).iteration_s;
  // The real job ran 1.6x slower per step than the profile's trials say.
  auto& pilot = pilot_laid_out_as(profile, pilot_config);
  pilot.seconds_per_step = 1.6 * profiled;

  const auto calibrated = Predictor::from_profile(profile);
  EXPECT_NEAR(calibrated.point(pilot_config, machine).iteration_s, pilot.seconds_per_step, 1e-6 * profiled);
  // Almost all of the step is compute here, so the factor is close to 1.6,
  // and it carries over to other configurations.
  EXPECT_GT(calibrated.compute_scale(), 1.55);
  EXPECT_LT(calibrated.compute_scale(), 1.75);
  const Config other{1, 1, 16, 1};
  EXPECT_GT(calibrated.point(other, machine).compute_s, 1.5 * Predictor::from_profile(profile, {.calibrate_to_pilot = false})
                                                                   .point(other, machine)
                                                                   .compute_s);
  bool noted = false;
  for (const auto& n : calibrated.assumptions()) noted |= n.find("so that the pilot at B = 128") != std::string::npos;
  EXPECT_TRUE(noted);

  PredictorOptions off;
  off.calibrate_to_pilot = false;
  EXPECT_DOUBLE_EQ(Predictor::from_profile(profile, off).compute_scale(), 1.0);

  // A pilot 20x off the profile ran somewhere else: stated, not used.
  pilot.seconds_per_step = 20 * profiled;
  const auto elsewhere = Predictor::from_profile(profile);
  EXPECT_DOUBLE_EQ(elsewhere.compute_scale(), 1.0);
  noted = false;
  for (const auto& n : elsewhere.assumptions()) noted |= n.find("more than 8x off the profile") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Predictor, APilotsEvaluationCalibratesTheEvaluationTimes) {
  test::Truth t;
  auto profile = test::make_profile(t, 50);
  const auto machine = profiled_machine(profile);
  const Config pilot_config{1, 2, 64, 1}, one_worker{1, 1, 64, 1};
  const auto uncalibrated = Predictor::from_profile(profile, {.calibrate_to_pilot = false});
  const double profiled = uncalibrated.point(pilot_config, machine).eval_s;
  ASSERT_GT(profiled, 0);
  // The job's evaluation took 1.4x what the profile's short trials say.
  auto& pilot = pilot_laid_out_as(profile, pilot_config);
  pilot.eval_s = 1.4 * profiled;

  const auto calibrated = Predictor::from_profile(profile);
  EXPECT_NEAR(calibrated.eval_scale(), 1.4, 1e-9);
  EXPECT_NEAR(calibrated.point(pilot_config, machine).eval_s, pilot.eval_s, 1e-9 * profiled);
  // One worker evaluates the whole split: the factor carries over, the shard doubles.
  EXPECT_NEAR(calibrated.point(one_worker, machine).eval_s, 1.4 * uncalibrated.point(one_worker, machine).eval_s,
              1e-9 * profiled);
  EXPECT_GT(calibrated.point(one_worker, machine).eval_s, 1.8 * pilot.eval_s);
  EXPECT_DOUBLE_EQ(calibrated.compute_scale(), 1.0) << "no step time: the compute stays as profiled";
  bool noted = false;
  for (const auto& n : calibrated.assumptions()) noted |= n.find("per evaluation") != std::string::npos;
  EXPECT_TRUE(noted);

  pilot.eval_s = 20 * profiled;  // measured somewhere else: stated, not used
  EXPECT_DOUBLE_EQ(Predictor::from_profile(profile).eval_scale(), 1.0);
}

// A step time measured on two nodes of a slower machine type is compared
// with the prediction there, not on one node of the profiled machine: when
// it is what the catalog's speed and network imply, nothing is rescaled.
TEST(Predictor, APilotOnOtherNodesIsComparedWhereItRan) {
  test::Truth t;
  auto profile = test::make_profile(t, 49);
  MachineSpec half = profiled_machine(profile);
  half.name = "half";
  half.relative_speed = 0.5;
  half.network_gbps = 1;
  half.network_latency_s = 50e-6;
  const Config two_nodes{2, 1, 64, 1};
  const double there = Predictor::from_profile(profile, {.calibrate_to_pilot = false}).point(two_nodes, half).iteration_s;
  auto& pilot = pilot_on_nodes(profile, two_nodes, half);
  pilot.seconds_per_step = there;
  EXPECT_NEAR(Predictor::from_profile(profile).compute_scale(), 1.0, 1e-6);

  // The same measurement taken as one node of the profiled machine would
  // make everything look slower than it is.
  pilot.nodes = 1;
  pilot.machine.reset();
  EXPECT_GT(Predictor::from_profile(profile).compute_scale(), 1.5);
}

// A pilot on two nodes whose metrics split its step: the compute factor
// answers for the step without the allreduce waited for after backward, the
// allreduce takes its measured time in flight and the overlap leaves the
// measured wait, so the pilot's step comes out as measured while one node's
// step carries none of the communication's error.
TEST(Predictor, ASplitPilotStepCalibratesComputeAndCommunicationApart) {
  test::Truth t;
  auto profile = test::make_profile(t, 50);
  MachineSpec net = profiled_machine(profile);
  net.network_gbps = 1;
  const Config two{2, 1, 64, 1}, one{1, 1, 128, 1}, pair_on_one_node{1, 2, 64, 1};
  const auto plain = Predictor::from_profile(profile, {.calibrate_to_pilot = false});
  const auto modelled = plain.point(two, net);
  ASSERT_GT(modelled.allreduce_s, 0);
  const double compute_part = 1.3 * (modelled.iteration_s - modelled.exposed_comm_s);

  auto& pilot = pilot_on_nodes(profile, two, net);
  // Twice the modelled allreduce in flight, all of it waited for (one bucket
  // starting when backward ends).
  pilot.comm_busy_s = 2 * modelled.allreduce_s;
  pilot.comm_exposed_s = pilot.comm_busy_s;
  pilot.seconds_per_step = compute_part + pilot.comm_exposed_s;
  const auto split = Predictor::from_profile(profile);
  const auto there = split.point(two, net);
  EXPECT_NEAR(there.iteration_s, pilot.seconds_per_step, 1e-6 * pilot.seconds_per_step);
  EXPECT_NEAR(there.allreduce_s, pilot.comm_busy_s, 1e-9);
  EXPECT_NEAR(there.exposed_comm_s, pilot.comm_exposed_s, 1e-6 * pilot.comm_exposed_s);
  EXPECT_NEAR(split.allreduce_scale_across_nodes(), 2.0, 1e-9);
  EXPECT_GT(split.compute_scale(), 1.25);
  EXPECT_LT(split.compute_scale(), 1.35);
  EXPECT_NEAR(split.point(pair_on_one_node, net).allreduce_s, plain.point(pair_on_one_node, net).allreduce_s, 1e-12)
      << "a ring within one node is not calibrated by one across nodes";
  bool noted = false;
  for (const auto& n : split.assumptions()) noted |= n.find("communication across nodes") != std::string::npos;
  EXPECT_TRUE(noted);

  // The same step unsplit puts the communication's error into the compute,
  // and one node's step with it.
  pilot.comm_busy_s = pilot.comm_exposed_s = -1;
  const auto whole = Predictor::from_profile(profile);
  EXPECT_NEAR(whole.point(two, net).iteration_s, pilot.seconds_per_step, 1e-6 * pilot.seconds_per_step);
  EXPECT_GT(whole.compute_scale(), split.compute_scale());
  EXPECT_GT(whole.point(one, net).iteration_s, split.point(one, net).iteration_s);
  EXPECT_DOUBLE_EQ(whole.allreduce_scale_across_nodes(), 1.0);
  // Metrics that never timed the allreduce (zeros) are read as unsplit, not
  // as an allreduce that took no time.
  pilot.comm_busy_s = pilot.comm_exposed_s = 0;
  const auto untimed = Predictor::from_profile(profile);
  EXPECT_DOUBLE_EQ(untimed.allreduce_scale_across_nodes(), 1.0);
  EXPECT_DOUBLE_EQ(untimed.compute_scale(), whole.compute_scale());

  // Half of it hidden behind backward: the overlap's p is found for that.
  pilot.comm_busy_s = 2 * modelled.allreduce_s;
  pilot.comm_exposed_s = 0.5 * pilot.comm_busy_s;
  pilot.seconds_per_step = compute_part + pilot.comm_exposed_s;
  const auto half = Predictor::from_profile(profile).point(two, net);
  EXPECT_NEAR(half.exposed_comm_s, pilot.comm_exposed_s, 1e-6 * pilot.comm_exposed_s);
  EXPECT_NEAR(half.iteration_s, pilot.seconds_per_step, 1e-6 * pilot.seconds_per_step);
}

// The last bucket's allreduce is waited for after backward. Where the
// profile records the engine's buckets, the last one is the recorded one; a
// profile before the record reckons it from the caps. Each profile here is
// measured on an engine whose buckets are the ones it says.
TEST(Predictor, TheRecordedLastBucketIsWhatBackwardCannotHide) {
  test::Truth t;
  t.gradient_bytes = 4 * 421642;  // small_cnn's: reckoned, 0.64 MB in the last bucket
  const auto reckoned_profile = test::make_profile(t, 51);
  t.last_bucket_bytes = 75264;  // as its engine makes them: its two convolutions
  const auto recorded_profile = test::make_profile(t, 51);
  ASSERT_EQ(recorded_profile.model.bucket_bytes.size(), 2u);
  MachineSpec net = profiled_machine(recorded_profile);
  net.network_gbps = 1;
  const Config two{2, 1, 64, 1};
  const PredictorOptions plain{.calibrate_to_pilot = false};
  const auto reckoned = Predictor::from_profile(reckoned_profile, plain).point(two, net);
  const auto recorded = Predictor::from_profile(recorded_profile, plain).point(two, net);
  // At 1 Gb/s half of a two-node ring's bytes cross the link each way: the
  // reckoned last bucket waits about 5 ms, the recorded one 0.6 ms, and there
  // the p-norm's own exposure (p fitted to the profile's overlap samples)
  // is what is left.
  EXPECT_GT(reckoned.exposed_comm_s, 5e-3);
  EXPECT_LT(recorded.exposed_comm_s, 0.5 * reckoned.exposed_comm_s);
  EXPECT_GE(recorded.exposed_comm_s, 75264 * 8 / 1e9);
}

// Where the profile recorded when each bucket was ready, the wait after
// backward follows from it, not from the fitted p: a large first bucket ready
// early hides behind the rest of backward and the small last one is waited
// for; every bucket ready only at the end leaves the whole allreduce exposed.
TEST(Predictor, RecordedBucketReadinessDecidesWhatIsHidden) {
  test::Truth t;
  t.gradient_bytes = 4 * 421642;
  t.last_bucket_bytes = 75264;
  auto early = test::make_profile(t, 53);
  ASSERT_EQ(early.model.bucket_bytes.size(), 2u);
  auto late = early;
  for (auto& s : early.compute) s.bucket_ready_fraction = {0.2, 1.0};
  for (auto& s : late.compute) s.bucket_ready_fraction = {1.0, 1.0};
  MachineSpec net = profiled_machine(early);
  net.network_gbps = 1;
  const Config two{2, 1, 64, 1};
  const PredictorOptions plain{.calibrate_to_pilot = false};
  const auto hidden = Predictor::from_profile(early, plain).point(two, net);
  const auto exposed = Predictor::from_profile(late, plain).point(two, net);
  EXPECT_NEAR(exposed.exposed_comm_s, exposed.allreduce_s, 1e-12 * exposed.allreduce_s);
  // The last bucket's 75 KB: half of it each way over 1 Gb/s, plus latency.
  EXPECT_GE(hidden.exposed_comm_s, 75264 * 8 / 1e9);
  EXPECT_LT(hidden.exposed_comm_s, 0.1 * exposed.exposed_comm_s);
  EXPECT_DOUBLE_EQ(hidden.compute_s, exposed.compute_s);
  const auto notes = Predictor::from_profile(early, plain).assumptions();
  EXPECT_TRUE(std::any_of(notes.begin(), notes.end(),
                          [](const std::string& n) { return n.find("where the profile saw backward") != std::string::npos; }));
}

TEST(Predictor, JsonAndTextCarryEveryInterval) {
  const auto profile = test::make_profile({}, 47);
  const auto pred = Predictor::from_profile(profile);
  const auto p = pred.predict({1, 2, 64, 1}, profiled_machine(profile));
  const auto j = to_json(p);
  for (const char* k : {"iteration_s", "epoch_s", "memory_bytes", "time_s", "cost", "steps"}) {
    ASSERT_TRUE(j.contains(k)) << k;
    EXPECT_LE(j[k]["lo"].get<double>(), j[k]["hi"].get<double>());
  }
  const auto text = format_prediction(p);
  EXPECT_NE(text.find("time to accuracy"), std::string::npos);
  EXPECT_NE(text.find("95% intervals"), std::string::npos);
  EXPECT_FALSE(pred.assumptions().empty());
}

}  // namespace
}  // namespace tula::predict
