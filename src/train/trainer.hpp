// The data-parallel training loop: one process per worker, gradients averaged
// by the bucketed reducer, evaluation on the test split after each epoch,
// metrics as JSON lines, checkpoints that resume to the same sample order.
// SIGTERM or SIGINT stops every worker at the same step boundary, with a
// checkpoint there (docs/design.md, "Stopping on a signal").
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
  // The signal (SIGTERM or SIGINT) that stopped the run at a step boundary;
  // none when it ran to its end. The same on every worker.
  std::optional<int> stopped_by_signal;

  // {"steps", "epochs", "train_loss"?, "test_accuracy"?, "samples_per_s", "wall_s",
  //  "stopped_by_signal"? (its name: "SIGTERM")}
  nlohmann::json to_json() const;
};

// Runs training as this process's rank (from the environment: torchrun, Slurm,
// Open MPI, or a single process). Throws std::exception with a clear message
// on bad input or a failed worker. Ignores SIGPIPE from then on (a dead peer
// is a c10d error, not a silent death), and for its duration handles SIGTERM
// and SIGINT: during set-up (rendezvous, resume) they end the process at once
// as usual; once training runs, the workers finish the step in progress,
// agree to stop after it, checkpoint there (with --checkpoint-dir) and
// return with stopped_by_signal set. One call at a time per process.
TrainSummary run_training(const TrainOptions& options);

}  // namespace tula::train
