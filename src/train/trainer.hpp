// The data-parallel training loop: one process per worker, gradients averaged
// by the bucketed reducer, evaluation on the test split after each epoch,
// metrics as JSON lines, checkpoints that resume to the same sample order.
#pragma once
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "train/train_options.hpp"

namespace tula::train {

struct TrainSummary {
  int rank = 0;  // of the worker that returns it: only rank 0 reports the run
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  // Mean training loss over the last epoch run, the part of it run when the
  // run stopped early, averaged over workers; none when no step ran.
  std::optional<double> train_loss;
  std::optional<double> test_accuracy;  // the last evaluation's; none when nothing was evaluated
  double samples_per_second = 0.0;      // global, over the steps timed after the first
  double wall_seconds = 0.0;

  // {"steps", "epochs", "train_loss"?, "test_accuracy"?, "samples_per_s", "wall_s"}
  nlohmann::json to_json() const;
};

// Runs training as this process's rank (from the environment: torchrun, Slurm,
// Open MPI, or a single process). Throws std::exception with a clear message
// on bad input or a failed worker.
TrainSummary run_training(const TrainOptions& options);

}  // namespace tula::train
