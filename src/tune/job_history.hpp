// What earlier jobs of the same setup needed to reach their target. Before a
// job has an accuracy curve, its plan rests on a prior for the examples its
// target needs (target_estimate.hpp); the stated one is off by up to 2x
// between models. Users train the same model again (new data, new seeds, a
// sweep), so each job that reaches its target leaves what it measured, the
// epochs at the reference batch its progress is worth, in a history file, and
// the next job of the same setup plans with their median and spread instead.
//
// The setup is everything that moves the epochs to a target: the model (and
// a TorchScript file's digest), the data, the target, the optimizer and its
// rate rule, the validation split, the evaluation cadence and the statistical
// model's own options. Not the seed, the objective, the resources or the pilot.
//
// The file is JSON Lines, one job per line, appended under an exclusive lock
// with one write and an fsync, so jobs finishing at once (`tula serve`) keep
// every line. A line that does not parse (a crash mid-write) is skipped and
// counted, never fatal: the history only ever informs a prior.
//
// A prior counts draws of the training curve, not jobs: jobs at one seed and
// one configuration train the same curve (the oracle's knee and fastest jobs
// at a seed chose alike and wrote the same crossing to the last digit), and
// counting it once per job pulled the median toward that seed and took one
// draw for two. Each line names its curve (`curve`) and a curve counts once,
// at its latest line.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/profile_cache.hpp"
#include "tune/target_estimate.hpp"
#include "tune/tune_options.hpp"

namespace tula::tune {

// The setup's canonical text (JSON with sorted keys). `model_digest` is a
// TorchScript file's digest (empty for a zoo model).
std::string history_setup(const TuneOptions& o, const std::string& model_digest);
// A TorchScript file's digest, so a changed model at the same path starts a
// history of its own; empty for a zoo model.
std::string model_digest(const TuneOptions& o);

// A launch of a job, as far as it shapes the training curve: the data each
// step reads follows from the seed, the workers and the global batch.
struct CurveLaunch {
  int64_t workers = 1;
  int64_t global_batch = 0;
  int64_t first_step = 0;  // optimizer steps done before it
};
// "seed 3; 2 x 64 from step 0; 1 x 128 from step 430": equal for two jobs
// exactly when they trained the same run.
std::string history_curve(uint64_t seed, const std::vector<CurveLaunch>& launches);

struct HistoryEntry {
  std::string setup;       // history_setup()
  double reference_epochs = 0;  // the progress to the target, in epochs at the reference batch
  double epochs = 0;       // epochs the job trained
  int64_t global_batch = 0;  // the batch it ended at
  std::string job;         // its directory
  // What trained the curve: the seed and each launch's workers and global
  // batch from its first step (history_curve). Empty in lines written before
  // it was kept: each such line is a curve of its own.
  std::string curve;
  std::string finished;    // ISO 8601 UTC
};

// Where the history lives by default, beside the profile cache:
// $TULA_CACHE_DIR/job-history.jsonl, else $XDG_CACHE_HOME/tula/...,
// else $HOME/.cache/tula/... (beside the profiles: predict/profile_cache.hpp).
// Throws std::runtime_error with none of them set.
std::string default_history_path(const predict::EnvGetter& env = predict::process_env());

// The most recent curves a prior is taken from: a setup's old runs on other
// code or data should fade out.
inline constexpr size_t kHistoryJobsUsed = 20;
// The spread of the log epochs over seeds assumed until three jobs measure it, and
// the least any number of jobs is trusted to: the epochs one configuration
// needed over seeds spread by about this much in the oracle's grids.
inline constexpr double kHistoryLogSdAssumed = 0.25;
inline constexpr double kHistoryLogSdFloor = 0.10;

class JobHistory {
 public:
  explicit JobHistory(std::string path);

  // The prior of `setup` (in ReferenceEpochs): the median of the last
  // kHistoryJobsUsed curves' log reference epochs (a curve at its latest
  // line), with the spread of a new draw (the curves' spread, widened by 1/n
  // for the median's own error); the stated prior when none matches or the
  // file does not exist. Throws std::runtime_error when the file exists
  // but cannot be read.
  EpochsPrior prior_for(const std::string& setup) const;
  // Appends one line. Throws std::runtime_error naming the file.
  void append(const HistoryEntry& entry) const;

  std::vector<HistoryEntry> entries() const;  // every line that parses, oldest first
  int skipped_lines() const { return skipped_; }  // of the last read
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  mutable int skipped_ = 0;
};

nlohmann::json to_json(const HistoryEntry& e);

}  // namespace tula::tune
