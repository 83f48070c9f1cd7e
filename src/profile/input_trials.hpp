// The input trials: `tula train`'s own loader on the real data set (the same
// split, transforms, decode threads and prefetch), timed alone and then
// feeding real training steps, so the profile can tell a step bound by
// reading and decoding from one bound by compute (predict/input_model.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "predict/profile.hpp"
#include "profile/compute_trials.hpp"
#include "profile/trial_model.hpp"
#include "train/train_options.hpp"

namespace tula::profile {

struct InputTrialOptions {
  int64_t batch = 32;          // per worker: the compute grid's anchor batch
  // Timed batches of the loader alone, after one warm-up: at least
  // `loader_batches` and `loader_seconds` (a one-off stall of a few batches
  // must not decide the median), at most `loader_max_seconds`.
  int loader_batches = 20;
  double loader_seconds = 1.0;
  double loader_max_seconds = 6.0;
  // Timed training steps fed by the loader, after the batches it prepared
  // before the first step (its prefetch) and one more have been used up:
  // those were ready without a wait that steady training would see.
  int steps = 12;
};

struct InputTrialResult {
  predict::LoaderSample loader;
  predict::InputStepSample steps;
  // Medians of what was measured: one batch prepared alone, a step's compute
  // and its wall time fed by the loader.
  double batch_s = 0, compute_s = 0, step_s = 0;
  std::string loader_kind;  // "image files decoded on N threads", "... in memory", ...
  // An image folder: bytes per image in --cache-decoded's cache, measured
  // on the batches of one more pass of the loader alone (0 otherwise).
  double decoded_bytes_per_sample = 0;
};

// `opened`, where given, is the training split as `data` opens it (it is not
// opened again). Throws what opening or reading the data throws (a missing
// folder, a file that fails with --on-bad-image fail).
InputTrialResult run_input_trials(const train::DataOptions& data, const std::string& model, TrialModel& trial,
                                  const InputTrialOptions& options, const Log& log,
                                  std::shared_ptr<data::Dataset> opened = nullptr);

// One line for people: which bounds a step at that batch, with the figures.
std::string describe_input(const InputTrialResult& r);

// Whether --cache-decoded would hold the whole training set: each worker
// caches what its shard reads, and the shards are drawn anew every epoch,
// so each ends up holding about all of it, beside training's own memory.
// `memory_bytes`: the machine's; `training_bytes`: one worker's M(b).
std::string describe_cache_fit(double bytes_per_sample, int64_t train_samples, double training_bytes,
                               int64_t memory_bytes, int64_t cores);

}  // namespace tula::profile
