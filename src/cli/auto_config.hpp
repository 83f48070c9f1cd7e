// `tula train --batch-size auto` and `--nproc auto`: the configuration chosen
// for this machine before training starts. A quick profile of the model on
// this input, data size and hardware comes from the profile cache
// (predict/profile_cache.hpp) or is measured in this process (as `tula
// profile --quick` would) and cached; the planner then takes the knee of the
// time/cost front over this machine as a one-type catalog
// (plan/local_catalog.hpp) for the run's --epochs, within what the user fixed
// (a given --nproc, --batch-size or --accumulation-steps). The choice and its
// reason are printed before anything trains, and the run then trains exactly
// as if those numbers had been given.
#pragma once
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "train/train_options.hpp"

namespace tula::cli {

// "auto" -> nullopt; an integer >= `min_value` -> it; anything else throws
// std::invalid_argument naming `option` and the text.
std::optional<int64_t> parse_count_or_auto(const std::string& text, const std::string& option, int64_t min_value = 1);

struct AutoRequest {
  bool choose_batch = false;       // --batch-size auto: the per-worker batch and accumulation steps
  bool choose_workers = false;     // --nproc auto: the worker count on this machine
  int64_t workers = 1;             // the fixed worker count when !choose_workers (--nproc N, or 1 without it)
  bool launch = false;             // --nproc was given (a number or auto): the workers run under the launcher
  int64_t batch_size = 0;          // the fixed per-worker batch when !choose_batch
  int64_t accumulation_steps = 0;  // fixed when > 0 (given, or with a fixed batch)
  bool reprofile = false;          // measure a fresh profile and replace the cached one
  double price_per_hour = 0;       // this machine's price per hour, for the cost side of the knee

  bool any() const { return choose_batch || choose_workers; }
};

struct AutoChoice {
  int64_t workers = 1;
  int64_t batch_per_worker = 1;
  int64_t accumulation_steps = 1;
  bool from_cache = false;     // the profile was reused, not measured now
  std::string profile_path;    // the cache file
};

// Chooses, printing to `out` (stderr of the launching process) where the
// profile came from, the configuration, its predicted epoch time and the
// knee's explanation. `options` must be validated. Throws
// std::invalid_argument for requests it cannot serve (--device cuda, a batch
// schedule, a worker of a job started elsewhere, more fixed workers than the
// profile can predict) and predict::InfeasibleError when nothing fits.
AutoChoice choose_configuration(const train::TrainOptions& options, const AutoRequest& request, std::ostream& out);

// `args` (tula's argv after the program name) with the choice in place of
// what was "auto": --batch-size, --accumulation-steps and --nproc carry the
// chosen numbers (--nproc only when `with_nproc`), and --reprofile and
// --price-per-hour, which only the choice reads, are gone.
std::vector<std::string> resolved_arguments(const std::vector<std::string>& args, const AutoChoice& choice,
                                            bool with_nproc);

}  // namespace tula::cli
