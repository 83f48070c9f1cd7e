// The data-parallel training loop: one process per worker, gradients averaged
// by the bucketed reducer, evaluation on the test split after each epoch,
// metrics as JSON lines, checkpoints that resume to the same sample order.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "train/train_options.hpp"

namespace tula::train {

struct TrainSummary {
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  double final_test_accuracy = -1.0;  // -1: not evaluated
  double final_train_loss = 0.0;
  double samples_per_second = 0.0;    // global, over the steps timed after the first
  double wall_seconds = 0.0;
};

// Runs training as this process's rank (from the environment: torchrun, Slurm,
// Open MPI, or a single process). Throws std::exception with a clear message
// on bad input or a failed worker.
TrainSummary run_training(const TrainOptions& options);

}  // namespace tula::train
