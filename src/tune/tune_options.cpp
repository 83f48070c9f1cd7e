#include "tune/tune_options.hpp"

#include "common/engine_names.hpp"

#include <cmath>

#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "plan/objective.hpp"
#include "tune/option_schema.hpp"

namespace tula::tune {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

}  // namespace

void TuneOptions::validate() const {
  require(!job.model.empty(), "--model is required");
  require(!job.out_dir.empty(), "--out is required (the job's directory: checkpoints, metrics, report)");
  check_option_bounds(*this);  // every number's bounds, as the API checks them (option_schema.hpp)
  require((job.target_accuracy > 0) != (job.epochs > 0),
          "give exactly one of --target-accuracy A (0 < A < 1) and --epochs E");
  require(job.epochs == static_cast<double>(static_cast<int64_t>(job.epochs)),
          "--epochs must be a whole number of epochs");
  plan::parse_objective(job.objective);  // throws naming what is wrong
  require(job.backend == "local" || job.backend == "slurm" || job.backend == "emulated",
          "--backend must be local, slurm or emulated (got '" + job.backend + "')");
  require(!job.resources.empty(), "--resources must be local or a catalog file");
  require(job.device == "cpu" || job.device == "cuda" || job.device == "auto", "--device must be cpu, cuda or auto");
  require(job.precision == "fp32" || job.precision == "bf16" || job.precision == "fp16",
          "--precision must be fp32, bf16 or fp16 (got '" + job.precision + "')");
  for (const auto& root : job.data_roots)
    require(!root.empty() && root[0] == '/', "--data-root " + root + " must be an absolute path");
  require(job.backend != "emulated" || job.resources != "local",
          "--backend emulated plans over the cluster's machine types: give --resources the catalog it was started "
          "from (e.g. catalogs/emulated.json)");
  require(common::canonical_dataset_name(job.dataset) != "imagefolder" || !job.data_dir.empty(),
          "--dataset imagefolder needs --data-dir: a folder of train/ and val/, or of one folder per class");
  require(watch.on_out_of_reach == "stop" || watch.on_out_of_reach == "continue",
          "--on-out-of-reach must be stop or continue");
  require(progress == "auto" || progress == "bar" || progress == "lines" || progress == "none",
          "--progress must be auto, bar, lines or none");
  if (!watch.start_at.empty()) parse_manual_config(watch.start_at);
  require(watch.start_on.empty() || !watch.start_at.empty(),
          "--start-on places --start-at's configuration: give --start-at too");
  if (!watch.start_on.empty()) parse_manual_placement(watch.start_on);
  // A schedule given by hand starts where --start-at says; --no-replan keeps it as given.
  require(watch.then_at.empty() || !watch.start_at.empty(),
          "--then-at moves on from --start-at's configuration: give --start-at too");
  if (!watch.then_at.empty()) {
    const double at = parse_manual_move(watch.then_at).epochs, end = to_target() ? watch.max_epochs : job.epochs;
    require(at < end, fmt::format("--then-at moves at epoch {:g}, but the job ends by epoch {:g}", at, end));
  }
  require(watch.then_on.empty() || !watch.then_at.empty(),
          "--then-on places --then-at's configuration: give --then-at too");
  if (!watch.then_on.empty()) parse_manual_placement(watch.then_on, "--then-on");
}

ManualConfig parse_manual_config(const std::string& text, const std::string& option) {
  ManualConfig c;
  std::istringstream in(text);
  char x = 0;
  const auto bad = [&] {
    return std::invalid_argument(option + " must look like WORKERSxBATCH or WORKERSxBATCHxACCUMULATION, e.g. 1x8 (got '" +
                                 text + "')");
  };
  if (!(in >> c.workers >> x >> c.batch_per_worker) || x != 'x') throw bad();
  if (in >> x) {
    if (x != 'x' || !(in >> c.accumulation_steps)) throw bad();
  }
  if (!in.eof() || c.workers < 1 || c.batch_per_worker < 1 || c.accumulation_steps < 1) throw bad();
  return c;
}

nlohmann::json to_json(const TuneOptions& o) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& s : option_specs())
    if (s.in_record) j[s.key()] = option_json(s, o);
  return j;
}

// A key missing from a tune.json stands for the option's value before it
// existed (option_schema.cpp, recorded_before), or today's default: read once
// here, so that a resumed or replayed job goes on as it ran.
TuneOptions tune_options_from_json(const nlohmann::json& j) {
  TuneOptions o;
  for (const auto& s : option_specs()) {
    if (!s.in_record) continue;
    if (j.contains(s.key())) {
      set_option(s, o, j.at(s.key()));
    } else if (s.recorded_before) {
      set_option(s, o, *s.recorded_before);
    }
  }
  return o;
}

ManualPlacement parse_manual_placement(const std::string& text, const std::string& option) {
  ManualPlacement p;
  const auto colon = text.find(':');
  p.machine_type = text.substr(0, colon);
  const auto bad = [&] {
    return std::invalid_argument(option + " must look like TYPE or TYPE:NODES, e.g. emu-half:4 (got '" + text + "')");
  };
  if (p.machine_type.empty()) throw bad();
  if (colon != std::string::npos) {
    std::istringstream in(text.substr(colon + 1));
    if (!(in >> p.nodes) || !in.eof() || p.nodes < 1) throw bad();
  }
  return p;
}

ManualMove parse_manual_move(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("--then-at must look like EPOCHS:WORKERSxBATCH[xACCUMULATION], e.g. 0.5:2x128 (got '" +
                                 text + "')");
  };
  const auto colon = text.find(':');
  if (colon == std::string::npos) throw bad();
  ManualMove m;
  std::istringstream in(text.substr(0, colon));
  if (!(in >> m.epochs) || !in.eof() || !(m.epochs > 0) || !std::isfinite(m.epochs)) throw bad();
  m.config = parse_manual_config(text.substr(colon + 1), "--then-at");
  return m;
}

int64_t validation_samples(const TuneOptions& o, int64_t train_samples) {
  constexpr int64_t kMostByDefault = 5000;
  const int64_t n =
      o.watch.validation_size >= 0 ? o.watch.validation_size : std::min(kMostByDefault, train_samples / 10);
  if (2 * n > train_samples) {
    throw std::invalid_argument(fmt::format(
        "--validation-size {} would leave fewer than half of the {} training samples to train on", n, train_samples));
  }
  return n;
}

double launch_warmup_epochs(const TuneOptions& o, int64_t global_batch) {
  return (o.training.warmup_at_reference || global_batch > o.training.reference_batch) ? o.training.warmup_epochs : 0.0;
}

double evaluations_per_epoch(const TuneOptions& o) { return 1 / o.watch.eval_every_epochs; }

int64_t evaluation_interval_steps(const TuneOptions& o, int64_t train_samples, int64_t global_batch) {
  const double steps_per_epoch =
      std::ceil(static_cast<double>(std::max<int64_t>(1, train_samples)) / static_cast<double>(std::max<int64_t>(1, global_batch)));
  return std::max<int64_t>(1, std::llround(o.watch.eval_every_epochs * steps_per_epoch));
}

PilotLayout pilot_layout(const TuneOptions& o) {
  PilotLayout p;
  const bool fastest = plan::parse_objective(o.job.objective).kind == plan::Objective::Kind::Fastest;
  p.workers = o.pilot.pilot_workers > 0 ? o.pilot.pilot_workers : fastest ? 2 : 1;
  p.batch_per_worker =
      o.pilot.pilot_batch > 0 ? o.pilot.pilot_batch : std::max<int64_t>(1, o.training.reference_batch / p.workers);
  return p;
}

int64_t pilot_length(int64_t pilot_steps, int64_t evaluation_interval) {
  if (evaluation_interval > pilot_steps && 2 * evaluation_interval <= 3 * pilot_steps) return evaluation_interval;
  return pilot_steps;
}

}  // namespace tula::tune
