// The largest global batch a plan for a fixed number of epochs considers.
//
// To a target accuracy the statistical model prices a batch's steps: past the
// gradient noise scale B_noise a larger batch needs almost as many steps, and
// its time to the target shows it. With the epochs fixed and no target nothing
// does: a larger batch only makes each epoch faster, so time and money alone
// chose batches of half the training set, two optimizer steps an epoch, and
// the epochs would end far short of the accuracy a smaller batch reaches. By
// McCandlish et al. 2018 (E(B) = E_min (1 + B / B_noise)) a fixed number of
// examples E makes E / (B_noise + B) minimum steps of progress: at B = B_noise
// half what a small batch makes of them, at 2 B_noise a third, each doubling
// past it nearly halving it again. So a fixed-epoch plan holds the global
// batch to at most
//   - B_noise where it is known: the caller's (SpaceOptions::b_noise), else
//     the profile's statistical model's;
//   - else the batch that leaves kFixedEpochsMinStepsPerEpoch optimizer steps
//     an epoch (docs/models.md, "The planner", says where 64 comes from);
// never below the batch the rate was tuned at (PredictorOptions::
// epochs_floor_batch: below it no epochs are saved) nor the space's
// min_global_batch. A space with a max_global_batch or its own per-worker
// batches is taken as given: no cap.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <string>

#include "plan/space.hpp"
#include "predict/predictor.hpp"

namespace tula::plan {

inline constexpr int64_t kFixedEpochsMinStepsPerEpoch = 64;

struct BatchCap {
  int64_t max_global_batch = 0;  // 0: none (to a target, a space taken as given, or a cap at the training set)
  std::string basis;             // "noise scale" or "steps per epoch"
  std::string reason;            // for people: the cap and why, one sentence without its final period
};

// The cap for plans made with `predictor` over `space` on `train_samples`
// samples an epoch.
BatchCap fixed_epochs_batch_cap(const predict::Predictor& predictor, const SpaceOptions& space, int64_t train_samples);

}  // namespace tula::plan
