// Compute and memory trials on one worker: forward+backward and optimizer
// time per step over a geometric grid of per-worker batch sizes, each after
// warm-up steps and repeated (every repeat kept), and the memory of a step at
// each batch size counted by the allocation meter.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/profile.hpp"
#include "profile/trial_model.hpp"

namespace tula::profile {

using Log = std::function<void(const std::string&)>;

struct ComputeTrialOptions {
  // Explicit batch sizes; empty: the automatic grid first, first*ratio, ...
  // up to `auto_max`, stopped early by memory or step time.
  std::vector<int64_t> batches;
  int64_t auto_first = 1;
  double auto_ratio = 2;
  int64_t auto_max = 1024;
  // A batch whose step is predicted (linearly, from the batches measured so
  // far) to need more than this many bytes is not run.
  int64_t memory_limit_bytes = 0;
  // The automatic grid stops after a batch whose median step took longer.
  double max_step_seconds = 2.0;
  int warmup = 2;
  int repeats = 5;
  uint64_t seed = 1;
  // Asked before each batch once the fits' minimum (kMinComputePoints) is
  // measured: "" to go on, or why the grid stops here (the time budget).
  std::function<std::string(int64_t next_batch)> stop_before;
  // On a device whose memory ran out at a batch (out-of-memory caught, the
  // cache freed), the largest batch that still fits is searched between the
  // last measured one and it, down to this relative gap.
  double fit_resolution = 0.05;
};

// The largest batch in [fits, fails) for which `fits_at` holds, by bisection
// until the gap is within `resolution` of the batch: `fits` is known to fit
// and `fails` known not to (the out-of-memory point found by trial).
int64_t largest_fitting_batch(int64_t fits, int64_t fails, const std::function<bool(int64_t)>& fits_at,
                              double resolution);

// The batches the trials will try, in order: `batches`, or the automatic grid
// (from auto_first, at least 2 for a model with batch norm, to auto_max).
// The memory and step-time stops may end the trials earlier.
std::vector<int64_t> planned_batches(const ComputeTrialOptions& options, bool has_batch_norm);

struct ComputeTrialResult {
  std::vector<predict::ComputeSample> compute;
  std::vector<predict::MemorySample> memory;
  // Per batch: bytes live when forward ends (inputs and the activations saved
  // for backward) and the step's peak above the static memory.
  nlohmann::json memory_detail = nlohmann::json::array();
  std::vector<std::string> notes;  // why the grid ended where it did
  // Where the device's memory ran out (0: it never did): the batch whose
  // step failed, and the largest found by trial to fit below it.
  int64_t out_of_memory_batch = 0;
  int64_t largest_fitting_batch = 0;
};

// The static memory of one worker as the meter counted it: weights and
// buffers, gradient buckets, optimizer state.
int64_t static_bytes(const TrialModel& model);

ComputeTrialResult run_compute_trials(TrialModel& model, const ModelTarget& target, const ComputeTrialOptions& options,
                                      const Log& log);

struct EvaluationTrialOptions {
  std::vector<int64_t> sample_counts;  // distinct numbers of test samples to evaluate, smallest first
  int64_t eval_batch = 512;            // `tula train --eval-batch-size`'s default
  int warmup = 1;                      // passes over the first count before any is timed
  int repeats = 3;
  // > 0: the counts are scaled, keeping their ratios, so that the timed passes
  // take about this long at the speed of the last warm-up pass; the first
  // count stays within [min_samples, max_samples].
  double budget_s = 0;
  int64_t min_samples = 16, max_samples = 512;
  uint64_t seed = 2;
};

// Forward-only passes over `sample_counts` samples (batches of eval_batch),
// one worker: the evaluation model's e0 + e1 * samples. The warm-up passes
// run once, over the first count: a later count only adds batches of shapes
// already seen, or one shorter last batch, which the median of its repeats
// absorbs.
std::vector<predict::EvaluationSample> run_evaluation_trials(TrialModel& model, const ModelTarget& target,
                                                             const EvaluationTrialOptions& options, const Log& log);

}  // namespace tula::profile
