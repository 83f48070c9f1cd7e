// `tula profile`: short measured trials of one model on one machine, written
// as a versioned profile ("tula-profile" v1, src/predict/profile.hpp) with
// every raw sample and the fitted models.
//
//   compute     forward+backward and optimizer time at a geometric grid of
//               per-worker batch sizes (one worker, all cores), after warm-up
//   memory      allocator-counted bytes of weights, gradients, optimizer state
//               and of one step at each batch size (memory_meter.hpp)
//   evaluation  forward-only passes over three sample counts
//   allreduce   message sizes 4 KiB .. the gradient size, for each worker
//               count, in worker processes on loopback (comm_trials.hpp)
//   overlap     a few real DDP steps per worker count: share of allreduce
//               hidden behind backward, and the contention of N workers
//   input       `tula train`'s loader on the real data, alone and feeding
//               steps: whether reading and decoding bound a step (input_trials.hpp)
//
// The compute grid is bracketed by an anchor step timed before and after it
// (anchor.hpp): a machine whose speed drifted in between gets its grid
// measured again. A time budget cuts the plan to fit (time_budget.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/fit.hpp"
#include "predict/profile.hpp"
#include "profile/anchor.hpp"
#include "profile/compute_trials.hpp"
#include "train/train_options.hpp"

namespace tula::profile {

// The data the trials read and how `tula train` will read it.
struct ProfileData {
  // A data set by name (its shape, classes and sizes are read from it), or
  // "synthetic" / empty with input_shape and classes.
  std::string dataset;
  std::string data_dir;
  std::vector<int64_t> input_shape;  // C, H, W (synthetic)
  int64_t classes = 10;
  int64_t train_samples = 0;  // synthetic: 0 means 10000 (as `tula train`)
  int64_t test_samples = 0;   // synthetic: 0 means train / 5 (as `tula train`)
  int64_t image_size = 0;     // 0: the data's size, raised to the model's minimum
  // For the input trials: imagefolder decode threads (0: min(4, hardware
  // threads)) and augmentation (--no-augment).
  int64_t decode_threads = 0;
  bool augment = true;
};

// The communication trials' workers: their buckets, as `tula train`'s, and
// their rendezvous.
struct ProfileCommunication {
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;               // 0: a free port
  int worker_timeout_s = 0;          // bounds the trials' timeouts; 0: 120 quick, 600 otherwise
};

struct ProfileOptions {
  std::string model = "small_cnn";
  // Where the compute and memory trials run: cpu, cuda or auto (CUDA where a
  // GPU is visible). The communication trials stay Gloo on the CPU.
  std::string device = "cpu";
  // The precision the steps are timed at, as `tula train --precision` will
  // run them: fp32, bf16 or fp16 (CUDA only). A profile is for one precision.
  std::string precision = "fp32";
  ProfileData data;
  double dropout = -1;

  std::vector<int64_t> batch_sizes;  // empty: automatic geometric grid
  int64_t max_batch_size = 1024;     // of the automatic grid
  int64_t memory_limit_bytes = 0;    // 0: half the host's memory on the CPU; the GPU's free memory on CUDA
  std::vector<int64_t> workers;      // empty: 2, 4, ... up to the cores (at least 2)
  bool quick = false;                // a small grid and few repeats: under a minute
  int warmup = -1;                   // -1: 1 quick, 3 otherwise
  int repeats = -1;                  // -1: 3 quick, 7 otherwise
  int64_t threads = 0;               // one worker's intra-op threads; 0: all cores
  ProfileCommunication communication;

  std::vector<std::string> pilot_metrics;  // `tula train --metrics` files
  double target_accuracy = 0;

  // Seconds the whole profile should take (0: no budget). The plan is cut to
  // fit (profile/time_budget.hpp), never below the samples the fits need.
  double time_budget_s = 0;
  // Anchors before and after the compute grid further apart than this
  // (relative) re-measure the grid once (profile/anchor.hpp).
  double anchor_threshold = kAnchorThreshold;
};

struct ProfileRun {
  predict::Profile profile;            // samples, and `fitted` when the fit succeeded
  nlohmann::json measurement;          // how each sample was measured, static memory, raw worker output
  std::optional<predict::FittedModels> fitted;
  std::string fit_error;               // why the fit failed (the profile is still written)
  std::vector<std::string> warnings;   // what the caller should see on stderr (also in `measurement`)
};

// The data's description and the input the model sees, resolved as `tula
// train` resolves them (a named data set is opened for its shape and sizes).
struct ResolvedInput {
  predict::DataInfo data;
  ModelTarget target;
  std::vector<int64_t> data_shape;  // C, H, W of the data before any resize
  // The training split as opened to resolve it (none for synthetic data),
  // kept so that the input trials do not read and decompress it again.
  std::shared_ptr<data::Dataset> train_set;
};
ResolvedInput resolve_input(const ProfileOptions& options);

// The data options `tula train` would run with for these profile options.
train::DataOptions training_data(const ProfileOptions& options);

// Checks the options; throws std::invalid_argument naming the option.
void validate(const ProfileOptions& options);

// `log` gets the progress, one line at a time; `warn` the warnings (a drift
// the anchor check could not settle, a time budget exceeded). Without `warn`
// the warnings go to `log`, prefixed "warning: ". `input`, where given, is
// resolve_input(options) already made (its data set is not opened again).
ProfileRun run_profile(const ProfileOptions& options, const Log& log, const Log& warn = {},
                       const ResolvedInput* input = nullptr);

// The profile JSON plus the "measurement" section (which readers ignore).
nlohmann::json profile_document(const ProfileRun& run);
// profile_document(run), written atomically.
void write_profile(const ProfileRun& run, const std::string& path);

}  // namespace tula::profile
