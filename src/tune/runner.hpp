// The tune runner: one job from a model and a data set to a trained model at
// the configuration the objective picks, and the bill against the prediction.
//
//   profile   `tula profile --quick` (or a given profile from this hardware)
//   pilot     the job's first steps at a small configuration with two workers:
//             its gradient statistics give the noise scale, its step time the
//             calibration; its steps count toward training (it checkpoints)
//   plan      the planner over the resources (this machine, or a catalog)
//   train     `tula train` workers through the backend, resuming the checkpoint
//   watch     every K steps: measured against predicted, the models re-fitted
//             from the job's own measurements (refit.hpp), the plan redone for
//             what is left; a better configuration by more than a restart costs
//             means a resize (stop with a checkpoint, relaunch with --resume)
//   stop      target reached, epochs done, or the target, deadline or budget
//             out of reach (said, checkpoint kept); a dead worker means a
//             relaunch from the last checkpoint, a bounded number of times
//   report    DIR/report.json and DIR/report.html; DIR/tune.json lets
//             `tula tune --resume DIR` continue
// No LibTorch here: the engine runs as child processes.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "records/states.hpp"
#include "tune/tune_options.hpp"

namespace tula::tune {

struct TuneResult {
  records::TuneOutcome state = records::TuneOutcome::Running;  // succeeded, stopped or failed at the end
  std::string reason;
  // 0 succeeded; 3 stopped because the goal is out of reach (the report says
  // why); 1 failed; 128 + N stopped by signal N (resumable).
  int exit_code = 0;
  std::string report_json, report_html;
};

// Asks a running job to stop cleanly (from a signal handler: only sets a flag).
void request_tune_stop(int signal);

// Runs (or with options.resume continues) the job in options.out_dir. Bad
// options or a directory holding another job throw std::invalid_argument;
// everything that goes wrong once the job has started ends in the outcome
// and the report.
//
// `profile_in_process` gets the job its quick profile in this process:
// called with the flags of the `tula profile` the job needs (--quick --cache
// --out ..., without "profile") and a sink for its lines, it writes the
// profile where they say, read from the profile cache or measured and cached,
// or throws.
// The engine provides it (the tune library does not link LibTorch); in this
// process a profile spares a second engine start-up (0.4-0.5 s here) on
// every job.
using QuickProfiler =
    std::function<void(const std::vector<std::string>& profile_args, const std::function<void(const std::string&)>& log)>;
TuneResult run_tune(TuneOptions options, const std::string& tula_binary, QuickProfiler profile_in_process);

}  // namespace tula::tune
