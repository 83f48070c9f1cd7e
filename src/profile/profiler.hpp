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
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/fit.hpp"
#include "predict/profile.hpp"
#include "profile/compute_trials.hpp"

namespace tula::profile {

struct ProfileOptions {
  std::string model = "small_cnn";
  // A data set by name (its shape, classes and sizes are read from it), or
  // "synthetic" / empty with input_shape and classes.
  std::string dataset;
  std::string data_dir;
  std::vector<int64_t> input_shape;  // C, H, W (synthetic)
  int64_t classes = 10;
  int64_t train_samples = 0;  // synthetic: 0 means 10000 (as `tula train`)
  int64_t test_samples = 0;   // synthetic: 0 means train / 5 (as `tula train`)
  int64_t image_size = 0;     // 0: the data's size, raised to the model's minimum
  double dropout = -1;

  std::vector<int64_t> batch_sizes;  // empty: automatic geometric grid
  int64_t max_batch_size = 1024;     // of the automatic grid
  int64_t memory_limit_bytes = 0;    // 0: half the device's memory
  std::vector<int64_t> workers;      // empty: 2, 4, ... up to the cores (at least 2)
  bool quick = false;                // a small grid and few repeats: under a minute
  int warmup = -1;                   // -1: 1 quick, 3 otherwise
  int repeats = -1;                  // -1: 3 quick, 7 otherwise
  int64_t threads = 0;               // one worker's intra-op threads; 0: all cores
  double bucket_mb = 25;
  double first_bucket_mb = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;               // 0: a free port
  int worker_timeout_s = 0;          // each worker run's deadline; 0: 120 quick, 600 otherwise

  std::vector<std::string> pilot_metrics;  // `tula train --metrics` files
  double target_accuracy = 0;
};

struct ProfileRun {
  predict::Profile profile;            // samples, and `fitted` when the fit succeeded
  nlohmann::json measurement;          // how each sample was measured, static memory, raw worker output
  std::optional<predict::FittedModels> fitted;
  std::string fit_error;               // why the fit failed (the profile is still written)
};

// Checks the options; throws std::invalid_argument naming the option.
void validate(const ProfileOptions& options);

ProfileRun run_profile(const ProfileOptions& options, const Log& log);

// The profile JSON plus the "measurement" section (which readers ignore),
// written atomically.
void write_profile(const ProfileRun& run, const std::string& path);

}  // namespace tula::profile
