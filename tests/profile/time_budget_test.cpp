// The time budget's plan: the estimate from one anchor step and the cuts that
// fit it, never below what the fits need.
#include "profile/time_budget.hpp"

#include <gtest/gtest.h>

#include "predict/profile.hpp"

namespace tula::profile {
namespace {

ProfilePlan full_plan() {
  ProfilePlan p;
  p.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  p.warmup = 3;
  p.repeats = 7;
  p.anchor_steps = 6;
  p.workers = {2, 4, 8};
  p.overlap_batches = {32, 128};
  p.overlap_steps = 8;
  p.evaluation_s = 5;
  return p;
}

// 10 ms at batch 32: about 0.3 ms per sample.
const StepEstimate kStep{32, 0.010};

TEST(TimeBudget, StepTimesGrowWithTheBatchFromAFixedShare) {
  EXPECT_DOUBLE_EQ(kStep.at(32), 0.010);
  EXPECT_NEAR(kStep.at(64), 0.019, 1e-12);
  EXPECT_NEAR(kStep.at(0), 0.001, 1e-12);
  const auto e = estimate(full_plan(), kStep);
  EXPECT_NEAR(e.anchors_s, 2 * 6 * 0.010, 1e-12);
  EXPECT_GT(e.compute_s, 0);
  EXPECT_DOUBLE_EQ(e.evaluation_s, 5);
  EXPECT_GE(e.communication_s, 3 * kWorkerRunOverheadS);
  EXPECT_NEAR(e.total(), e.anchors_s + e.compute_s + e.evaluation_s + e.communication_s, 1e-9);
}

TEST(TimeBudget, TheStepTimeStopEndsTheExpectedGrid) {
  auto p = full_plan();
  p.max_step_s = 0.05;  // a step with its update passes 0.05 s from about batch 145
  const auto grid = expected_grid(p, kStep);
  EXPECT_EQ(grid, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256})) << "up to the first slower step";
  p.max_step_s = 1e-9;
  EXPECT_EQ(expected_grid(p, kStep).size(), static_cast<size_t>(predict::kMinComputePoints));
}

TEST(TimeBudget, AGenerousBudgetCutsNothing) {
  auto p = full_plan();
  const auto before = describe(p);
  EXPECT_TRUE(fit_to_budget(p, kStep, 1e6).empty());
  EXPECT_EQ(describe(p), before);
}

TEST(TimeBudget, CutsWorkerCountsFirstThenRepeatsThenTheLargestBatches) {
  auto p = full_plan();
  const double full = estimate(p, kStep).total();
  // Room for everything but the extra worker counts.
  ProfilePlan one_run = full_plan();
  one_run.workers = {2};
  const double without_workers = estimate(one_run, kStep).total();
  ASSERT_LT(without_workers, full);
  auto cuts = fit_to_budget(p, kStep, without_workers + 0.01);
  EXPECT_EQ(p.workers, std::vector<int64_t>{2});
  EXPECT_EQ(p.batches.size(), full_plan().batches.size()) << "no batch cut while dropping workers sufficed";
  EXPECT_EQ(p.repeats, 7);
  ASSERT_EQ(cuts.size(), 2u);
  EXPECT_NE(cuts[0].find("8 workers"), std::string::npos) << cuts[0];
  EXPECT_NE(cuts[1].find("4 workers"), std::string::npos) << cuts[1];

  // A tighter budget takes repeats, warm-up and large batches, in that order.
  p = full_plan();
  cuts = fit_to_budget(p, kStep, 8.0);
  EXPECT_LE(estimate(p, kStep).total(), 8.0);
  EXPECT_EQ(p.workers.size(), 1u);
  EXPECT_EQ(p.overlap_batches.size(), 1u);
  EXPECT_EQ(p.repeats, 3);
  EXPECT_EQ(p.warmup, 1);
  EXPECT_LT(p.batches.size(), full_plan().batches.size());
  EXPECT_EQ(p.batches.front(), 1) << "the largest batches go, the smallest stay";
}

TEST(TimeBudget, NeverBelowTheMinimumTheFitsNeed) {
  auto p = full_plan();
  const auto cuts = fit_to_budget(p, kStep, 0.001);
  EXPECT_FALSE(cuts.empty());
  EXPECT_EQ(static_cast<int>(p.batches.size()), predict::kMinComputePoints);
  EXPECT_EQ(p.batches, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(p.repeats, 2);
  EXPECT_EQ(p.warmup, 1);
  EXPECT_EQ(p.workers, std::vector<int64_t>{2});
  EXPECT_GT(estimate(p, kStep).total(), 0.001) << "the minimum is measured even past the budget";
}

}  // namespace
}  // namespace tula::profile
