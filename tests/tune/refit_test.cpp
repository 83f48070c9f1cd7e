// The remaining work toward a target accuracy runs to an evaluation: the job
// can only see the target when it evaluates.
#include <gtest/gtest.h>

#include "tune/refit.hpp"

namespace tula::tune {
namespace {

Refit refit_for_fashion_mnist() {
  predict::Profile profile;
  profile.data.train_samples = 60000;
  TuneOptions options;
  options.target_accuracy = 0.85;
  options.eval_every_epochs = 0.5;  // every 938 steps at batch 32
  return Refit(profile, options);
}

JobView view_at(int64_t step, double crossing_in_steps) {
  JobView v;
  v.steps_done = step;
  v.samples_done = static_cast<double>(step) * 32;
  v.b_noise = 0;  // a minimum step is one step: the crossing is in plain steps
  v.min_steps_done = static_cast<double>(step);
  v.target_min_steps = v.min_steps_done + crossing_in_steps;
  return v;
}

predict::Config two_by_sixteen() {
  predict::Config c;
  c.workers_per_node = 2;
  c.batch_per_worker = 16;
  return c;
}

TEST(Refit, RemainingStepsRunToTheEvaluationAfterTheCrossing) {
  const auto refit = refit_for_fashion_mnist();
  // Crossing at step 900: the next evaluation is at 938 (half an epoch).
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(800, 100), two_by_sixteen()), 138);
  // Crossing at step 1785: the epoch ends first, at step 1875 (60000 / 32).
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(1685, 100), two_by_sixteen()), 190);
}

TEST(Refit, ACrossingForecastInThePastWaitsForTheNextEvaluation) {
  const auto refit = refit_for_fashion_mnist();
  // At an evaluation step (938) that missed the target, the next chance is 1875 (epoch end).
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(938, 0), two_by_sixteen()), 937);
}

}  // namespace
}  // namespace tula::tune
