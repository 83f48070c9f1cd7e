#include "profile/time_budget.hpp"

#include <algorithm>

#include <fmt/ranges.h>

#include "predict/profile.hpp"

namespace tula::profile {
namespace {

std::string join(const std::vector<int64_t>& v) {
  return v.empty() ? "none" : fmt::format("{}", fmt::join(v, ","));
}

constexpr double kOptimizerShare = 1.2;

}  // namespace

double StepEstimate::at(int64_t b) const {
  const double ratio = static_cast<double>(b) / static_cast<double>(std::max<int64_t>(1, batch));
  return seconds * (fixed_share + (1 - fixed_share) * ratio);
}

double compute_batch_seconds(const ProfilePlan& plan, const StepEstimate& step, int64_t batch) {
  return (plan.warmup + plan.repeats + 1) * step.at(batch) * kOptimizerShare;
}

std::vector<int64_t> expected_grid(const ProfilePlan& plan, const StepEstimate& step) {
  std::vector<int64_t> out;
  for (const int64_t b : plan.batches) {
    out.push_back(b);
    const bool enough = static_cast<int>(out.size()) >= predict::kMinComputePoints;
    if (plan.max_step_s > 0 && enough && step.at(b) * kOptimizerShare > plan.max_step_s) break;
  }
  return out;
}

double after_compute_seconds(const ProfilePlan& plan, const StepEstimate& step) {
  double comm = 0;
  for (const int64_t n : plan.workers) {
    comm += kWorkerRunOverheadS;
    // n workers share the cores: each step of one takes about n times as long.
    for (const int64_t b : plan.overlap_batches) comm += plan.overlap_steps * static_cast<double>(n) * step.at(b);
  }
  return plan.evaluation_s + comm;
}

PlanEstimate estimate(const ProfilePlan& plan, const StepEstimate& step) {
  PlanEstimate e;
  e.anchors_s = 2.0 * plan.anchor_steps * step.seconds;
  for (const int64_t b : expected_grid(plan, step)) e.compute_s += compute_batch_seconds(plan, step, b);
  e.evaluation_s = plan.evaluation_s;
  e.communication_s = after_compute_seconds(plan, step) - plan.evaluation_s;
  return e;
}

std::vector<std::string> fit_to_budget(ProfilePlan& plan, const StepEstimate& step, double budget_s) {
  std::vector<std::string> cuts;
  const auto fits = [&] { return estimate(plan, step).total() <= budget_s; };
  while (!fits() && plan.workers.size() > 1) {
    cuts.push_back(fmt::format("communication trials with {} workers left out", plan.workers.back()));
    plan.workers.pop_back();
  }
  while (!fits() && plan.overlap_batches.size() > 1) {
    cuts.push_back(fmt::format("DDP steps at batch {} left out", plan.overlap_batches.back()));
    plan.overlap_batches.pop_back();
  }
  if (!fits() && plan.repeats > 3) {
    cuts.push_back(fmt::format("compute repeats {} -> 3", plan.repeats));
    plan.repeats = 3;
  }
  if (!fits() && plan.warmup > 1) {
    cuts.push_back(fmt::format("compute warm-up steps {} -> 1", plan.warmup));
    plan.warmup = 1;
  }
  // The grid as it would end anyway (the step-time stop), then its largest
  // batches, as long as the fits keep their minimum.
  auto grid = expected_grid(plan, step);
  if (!fits() && grid.size() < plan.batches.size()) plan.batches = grid;
  while (!fits() && static_cast<int>(plan.batches.size()) > predict::kMinComputePoints) {
    cuts.push_back(fmt::format("batch {} left out", plan.batches.back()));
    plan.batches.pop_back();
  }
  if (!fits() && plan.repeats > 2) {
    cuts.push_back(fmt::format("compute repeats {} -> 2", plan.repeats));
    plan.repeats = 2;
  }
  return cuts;
}

std::string describe(const ProfilePlan& plan) {
  return fmt::format("batches {}; {} warm-up + {} repeats each; communication with {} workers, DDP steps at batch {}",
                     join(plan.batches), plan.warmup, plan.repeats, join(plan.workers), join(plan.overlap_batches));
}

}  // namespace tula::profile
