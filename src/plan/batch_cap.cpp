#include "plan/batch_cap.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::plan {

namespace {

using common::format_number;

// The noise scale to cap at, and where it came from; 0 where none is known.
std::pair<double, std::string> known_noise_scale(const predict::Predictor& predictor, const SpaceOptions& space) {
  if (space.b_noise > 0) return {space.b_noise, "as given to the planner"};
  const auto& statistical = predictor.models().statistical;
  if (statistical) return {statistical->b_noise(), "the profile's statistical model"};
  return {0, ""};
}

}  // namespace

BatchCap fixed_epochs_batch_cap(const predict::Predictor& predictor, const SpaceOptions& space, int64_t train_samples) {
  if (predictor.to_target() || space.max_global_batch > 0 || !space.batch_per_worker.empty()) return {};
  BatchCap cap;
  std::string o = fmt::format("Fixed epochs: with {} epoch(s) and no accuracy target, the global batch is held to ",
                              format_number(predictor.fixed_epochs(), 3));
  const auto [b_noise, source] = known_noise_scale(predictor, space);
  if (b_noise > 0) {
    cap.basis = "noise scale";
    cap.max_global_batch = std::max<int64_t>(1, static_cast<int64_t>(std::floor(b_noise)));
    o += fmt::format("at most the gradient noise scale B_noise {} ({}): there the epochs' samples make half the "
                     "progress a small batch makes of them, and each doubling past it nearly halves that again",
                     format_number(b_noise, 3), source);
  } else {
    cap.basis = "steps per epoch";
    cap.max_global_batch = std::max<int64_t>(1, train_samples / kFixedEpochsMinStepsPerEpoch);
    o += fmt::format("at most {}, {} optimizer steps an epoch over {} training samples: no gradient noise scale is "
                     "known, and a batch far above that scale buys almost no progress per sample, so the epochs "
                     "would end short of the accuracy a smaller batch reaches",
                     cap.max_global_batch, kFixedEpochsMinStepsPerEpoch, train_samples);
  }
  const auto tuned_at = static_cast<int64_t>(predictor.options().epochs_floor_batch);
  if (tuned_at > cap.max_global_batch) {
    cap.max_global_batch = tuned_at;
    o += fmt::format(", raised to {}, the batch the rate was tuned at (no smaller one saves epochs)", tuned_at);
  }
  if (space.min_global_batch > cap.max_global_batch) {
    cap.max_global_batch = space.min_global_batch;
    o += fmt::format(", raised to the smallest global batch asked for, {}", space.min_global_batch);
  }
  // At the training set the engine's own limit binds: no cap to speak of.
  if (cap.max_global_batch >= train_samples) return {};
  cap.reason = std::move(o);
  return cap;
}

}  // namespace tula::plan
