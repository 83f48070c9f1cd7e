// What `tula predict`, `plan` and `simulate` share: reading profiles with the
// user's overrides, and the options every one of them takes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "plan/catalog.hpp"
#include "predict/predictor.hpp"

namespace tula::cli {

struct PlanningInputs {
  std::vector<std::string> profiles;
  int64_t dataset_size = 0;  // > 0: training samples instead of the profile's
  int64_t test_size = -1;    // >= 0: test samples instead of the profile's
  double epochs = 0;         // > 0: predict for this many epochs even with a statistical model
  int draws = 400;
  bool no_pilot_calibration = false;
  bool noise_growth = false;
  int64_t epochs_floor_batch = 0;

  // Registers --profile (required; repeatable where `many`), --dataset-size, --test-size, --epochs, --draws,
  // --no-pilot-calibration, --noise-growth, --epochs-floor-batch.
  void add_options(CLI::App& sub, bool many);
  // Every profile read (ProfileError names the file and field) with the overrides applied.
  std::vector<predict::Profile> load() const;
  predict::PredictorOptions predictor_options() const;
};

// Prints the assumptions behind a prediction, one "  - " line each, under a
// heading, as the end of a command's text report.
void print_assumptions(const std::vector<std::string>& assumptions);

// The catalog machine named `name`, or the only one when `name` is empty.
// Throws std::invalid_argument listing the names when it is not found.
size_t find_machine(const plan::Catalog& catalog, const std::string& name);

}  // namespace tula::cli
