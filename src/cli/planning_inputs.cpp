#include "cli/planning_inputs.hpp"

#include <iostream>
#include <stdexcept>

namespace tula::cli {

void PlanningInputs::add_options(CLI::App& sub, bool many) {
  auto* opt = sub.add_option("--profile,-p", profiles,
                             many ? "Profile JSON from `tula profile` (repeat for one per device kind)"
                                  : "Profile JSON from `tula profile`");
  opt->required();
  if (!many) opt->expected(1);
  sub.add_option("--dataset-size", dataset_size, "Training samples (default: the profile's data set)");
  sub.add_option("--test-size", test_size, "Test samples evaluated each epoch (default: the profile's)");
  sub.add_option("--epochs", epochs,
                 "Predict for this many epochs (default: to the target accuracy when the profile has pilots, else 1)");
  sub.add_option("--draws", draws, "Parameter draws behind each interval")->capture_default_str();
  sub.add_flag("--no-pilot-calibration", no_pilot_calibration,
               "Use the profiled compute times as measured, not scaled to the pilot run's step time");
  // Off by default here: a profile's pilots ran to the target, and their read
  // (the later half of each run) already sits late in the run; grown back over
  // the whole run it predicted the held-out steps worse (docs/benchmarks/profiler-and-predictions.md).
  sub.add_flag("--noise-growth", noise_growth,
               "Grow the pilot's gradient noise scale over the job (the measured law) instead of taking it as read");
  sub.add_option("--epochs-floor-batch", epochs_floor_batch,
                 "Below this global batch (the one the rate was tuned at) predict no fewer epochs than at it "
                 "(default 0: the noise-scale law alone)");
}

std::vector<predict::Profile> PlanningInputs::load() const {
  if (dataset_size < 0) throw std::invalid_argument("--dataset-size must be positive");
  if (epochs < 0) throw std::invalid_argument("--epochs must be positive");
  std::vector<predict::Profile> out;
  for (const auto& path : profiles) {
    auto p = predict::load_profile(path);
    if (dataset_size > 0) p.data.train_samples = dataset_size;
    if (test_size >= 0) p.data.test_samples = test_size;
    out.push_back(std::move(p));
  }
  return out;
}

predict::PredictorOptions PlanningInputs::predictor_options() const {
  if (draws < 0) throw std::invalid_argument("--draws must be non-negative");
  if (epochs_floor_batch < 0) throw std::invalid_argument("--epochs-floor-batch must be 0 (none) or a global batch");
  predict::PredictorOptions o;
  o.epochs = epochs;
  o.draws = draws;
  o.calibrate_to_pilot = !no_pilot_calibration;
  if (noise_growth) o.noise_growth = predict::measured_noise_growth();
  o.epochs_floor_batch = static_cast<double>(epochs_floor_batch);
  return o;
}

void print_assumptions(const std::vector<std::string>& assumptions) {
  std::cout << "assumptions:\n";
  for (const auto& a : assumptions) std::cout << "  - " << a << "\n";
  std::cout.flush();
}

size_t find_machine(const plan::Catalog& catalog, const std::string& name) {
  std::string names;
  for (size_t i = 0; i < catalog.machines.size(); ++i) {
    if (catalog.machines[i].spec.name == name) return i;
    names += (names.empty() ? "" : ", ") + catalog.machines[i].spec.name;
  }
  if (name.empty() && catalog.machines.size() == 1) return 0;
  if (name.empty()) throw std::invalid_argument("--machine: the catalog has several machine types; name one of: " + names);
  throw std::invalid_argument("--machine: no machine type '" + name + "' in the catalog (it has: " + names + ")");
}

}  // namespace tula::cli
