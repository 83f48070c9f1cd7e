// A job with a fixed number of epochs and no accuracy target: with the
// epochs fixed the planner weighs only time and money, and a larger batch is
// always faster per epoch, so without a cap it planned batches of half the
// training set (two optimizer steps an epoch). The cap holds the global batch
// to the gradient noise scale where one is known, else to a batch that
// leaves kFixedEpochsMinStepsPerEpoch optimizer steps an epoch.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "plan/batch_cap.hpp"
#include "plan/catalog.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "predict/profile.hpp"

namespace tula::plan {
namespace {

std::string source(const std::string& relative) { return std::string(TULA_SOURCE_DIR) + "/" + relative; }

// The profile of the recorded resize tune job (small_cnn on Fashion-MNIST's
// 60,000 samples, no gradient-noise samples, no pilots) and the example
// catalog: what `tula plan --profile bench/results/watch_cases/resize/profile.json
// --catalog catalogs/example.json --objective knee --epochs 2` plans.
const predict::Profile& resize_profile() {
  static const auto p = predict::load_profile(source("bench/results/watch_cases/resize/profile.json"));
  return p;
}

Catalog example_catalog() { return load_catalog(source("catalogs/example.json")); }

// The largest global batch among the plan's feasible configurations.
int64_t largest_global_batch(const Plan& plan) {
  int64_t largest = 0;
  for (const auto& c : plan.candidates) largest = std::max(largest, c.config.global_batch());
  return largest;
}

PlannerOptions for_epochs(double epochs) {
  PlannerOptions o;
  o.predictor.epochs = epochs;
  return o;
}

TEST(FixedEpochsBatchCap, KeepsSixtyFourStepsAnEpochWithoutANoiseScale) {
  const Planner planner(resize_profile(), load_catalog(source("catalogs/example.json")), for_epochs(2));
  const auto plan = planner.plan(Objective::knee());
  ASSERT_FALSE(plan.goal.to_target);
  const int64_t samples = resize_profile().data.train_samples;
  ASSERT_EQ(samples, 60000);
  const int64_t cap = samples / 64;  // 937: 64 optimizer steps an epoch
  // Before the cap the knee was 16 nodes x 2 workers x 1024 = 32768, under two steps an epoch.
  EXPECT_LE(plan.chosen_candidate().config.global_batch(), cap);
  for (const auto& c : plan.candidates) ASSERT_LE(c.config.global_batch(), cap);
}

// The plan says the cap, why, and that it binds, in its explanation and JSON.
TEST(FixedEpochsBatchCap, IsExplainedWhereItBinds) {
  const auto plan = Planner(resize_profile(), example_catalog(), for_epochs(2)).plan(Objective::knee());
  EXPECT_EQ(plan.batch_cap.max_global_batch, 60000 / kFixedEpochsMinStepsPerEpoch);
  EXPECT_EQ(plan.batch_cap.basis, "steps per epoch");
  EXPECT_EQ(plan.chosen_candidate().config.global_batch(), 512);  // the largest power of two under 937
  EXPECT_NE(
      plan.notes.explanation.find("the global batch is held to at most 937, 64 optimizer steps an epoch over 60000 "
                                  "training samples: no gradient noise scale is known"),
      std::string::npos)
      << plan.notes.explanation;
  EXPECT_NE(plan.notes.explanation.find("(binding)"), std::string::npos) << plan.notes.explanation;
  EXPECT_EQ(plan.notes.limit, "batch cap");
  const auto j = to_json(plan);
  EXPECT_EQ(j["batch_cap"]["max_global_batch"], 937);
  EXPECT_EQ(j["batch_cap"]["basis"], "steps per epoch");
}

// An explicit bound is the user's: the cap gives way to it, and the plan is
// the one from before the cap.
TEST(FixedEpochsBatchCap, TheUsersMaxGlobalBatchReplacesIt) {
  auto o = for_epochs(2);
  o.space.max_global_batch = 60000;
  const auto plan = Planner(resize_profile(), example_catalog(), o).plan(Objective::knee());
  EXPECT_EQ(plan.batch_cap.max_global_batch, 0);
  EXPECT_EQ(plan.chosen_candidate().config.global_batch(), 32768);
  EXPECT_EQ(plan.notes.explanation.find("Fixed epochs"), std::string::npos) << plan.notes.explanation;
  EXPECT_TRUE(to_json(plan)["batch_cap"].is_null());
}

// A profile with a statistical model (noise samples and a pilot), planned for
// fixed epochs: the cap is its B_noise.
TEST(FixedEpochsBatchCap, IsTheNoiseScaleOfTheProfilesStatisticalModel) {
  const auto profile = predict::load_profile(source("bench/results/tune/small_cnn-sim-profile.json"));
  const Planner planner(profile, example_catalog(), for_epochs(2));
  const auto plan = planner.plan(Objective::knee());
  ASSERT_FALSE(plan.goal.to_target);
  const auto& statistical = planner.predictor_for(plan.chosen_candidate().machine).models().statistical;
  ASSERT_TRUE(statistical.has_value());
  const double b_noise = statistical->b_noise();
  ASSERT_LT(b_noise, 60000 / kFixedEpochsMinStepsPerEpoch) << "the test needs a cap other than the default's";
  EXPECT_EQ(plan.batch_cap.basis, "noise scale");
  EXPECT_EQ(plan.batch_cap.max_global_batch, static_cast<int64_t>(b_noise));
  EXPECT_LE(largest_global_batch(plan), b_noise);
  EXPECT_NE(plan.notes.explanation.find("the profile's statistical model"), std::string::npos)
      << plan.notes.explanation;

  // To the target the model prices the steps itself: no cap.
  const auto to_target = Planner(profile, example_catalog()).plan(Objective::knee());
  ASSERT_TRUE(to_target.goal.to_target);
  EXPECT_EQ(to_target.batch_cap.max_global_batch, 0);
  EXPECT_GT(largest_global_batch(to_target), b_noise);
}

// A noise scale the caller measured (a tune job's pilot) caps ahead of the default.
TEST(FixedEpochsBatchCap, IsTheNoiseScaleTheCallerGives) {
  auto o = for_epochs(2);
  o.space.b_noise = 300.5;
  const auto plan = Planner(resize_profile(), example_catalog(), o).plan(Objective::knee());
  EXPECT_EQ(plan.batch_cap.max_global_batch, 300);
  EXPECT_EQ(plan.batch_cap.basis, "noise scale");
  EXPECT_LE(largest_global_batch(plan), 300);
  EXPECT_EQ(plan.chosen_candidate().config.global_batch(), 256);
  EXPECT_NE(plan.notes.explanation.find("B_noise 300 (as given to the planner)"), std::string::npos)
      << plan.notes.explanation;
}

// Never below the batch the rate was tuned at, nor the smallest one asked for.
TEST(FixedEpochsBatchCap, NeverBelowTheTunedOrTheSmallestAskedBatch) {
  auto o = for_epochs(2);
  o.predictor.epochs_floor_batch = 2048;
  const auto tuned = Planner(resize_profile(), example_catalog(), o).plan(Objective::knee());
  EXPECT_EQ(tuned.batch_cap.max_global_batch, 2048);
  EXPECT_EQ(largest_global_batch(tuned), 2048);
  EXPECT_NE(tuned.notes.explanation.find("raised to 2048, the batch the rate was tuned at"), std::string::npos)
      << tuned.notes.explanation;

  auto m = for_epochs(2);
  m.space.min_global_batch = 4096;
  const auto asked = Planner(resize_profile(), example_catalog(), m).plan(Objective::knee());
  EXPECT_EQ(asked.batch_cap.max_global_batch, 4096);
  for (const auto& c : asked.candidates) EXPECT_EQ(c.config.global_batch(), 4096);
}

// A space that lists its per-worker batches is taken as given.
TEST(FixedEpochsBatchCap, ListedBatchesAreTakenAsGiven) {
  auto o = for_epochs(2);
  o.space.nodes = {1};
  o.space.workers_per_node = {2};
  o.space.batch_per_worker = {4096};
  o.space.accumulation_steps = {1};
  const auto plan = Planner(resize_profile(), example_catalog(), o).plan(Objective::knee());
  EXPECT_EQ(plan.batch_cap.max_global_batch, 0);
  EXPECT_EQ(plan.chosen_candidate().config.global_batch(), 8192);
}

// A cap at or above the training set is none: the engine's own limit binds.
TEST(FixedEpochsBatchCap, NoneWhereTheTrainingSetIsSmaller) {
  auto o = for_epochs(2);
  o.space.b_noise = 1e6;
  const auto plan = Planner(resize_profile(), example_catalog(), o).plan(Objective::knee());
  EXPECT_EQ(plan.batch_cap.max_global_batch, 0);
  EXPECT_EQ(plan.chosen_candidate().config.global_batch(), 32768);
}

}  // namespace
}  // namespace tula::plan
