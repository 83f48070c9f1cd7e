#include "tune/tune_options.hpp"

#include "common/engine_names.hpp"

#include <cmath>

#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "plan/objective.hpp"

namespace tula::tune {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

}  // namespace

void TuneOptions::validate() const {
  require(!model.empty(), "--model is required");
  require(!out_dir.empty(), "--out is required (the job's directory: checkpoints, metrics, report)");
  require((target_accuracy > 0) != (epochs > 0),
          "give exactly one of --target-accuracy A (0 < A < 1) and --epochs E");
  require(target_accuracy < 1, "--target-accuracy must be below 1 (a fraction: 0.85 means 85%)");
  require(epochs >= 0 && epochs == static_cast<double>(static_cast<int64_t>(epochs)),
          "--epochs must be a whole number of epochs");
  plan::parse_objective(objective);  // throws naming what is wrong
  require(backend == "local" || backend == "slurm" || backend == "emulated",
          "--backend must be local, slurm or emulated (got '" + backend + "')");
  require(!resources.empty(), "--resources must be local or a catalog file");
  require(device == "cpu" || device == "cuda" || device == "auto", "--device must be cpu, cuda or auto");
  for (const auto& root : data_roots) require(!root.empty() && root[0] == '/', "--data-root " + root + " must be an absolute path");
  require(backend != "emulated" || resources != "local",
          "--backend emulated plans over the cluster's machine types: give --resources the catalog it was started "
          "from (e.g. catalogs/emulated.json)");
  require(lr > 0, "--lr must be positive");
  require(reference_batch >= 1, "--reference-batch must be at least 1");
  require(profile_budget_s > 0, "--profile-budget must be positive (seconds)");
  require(pilot_steps >= 0, "--pilot-steps must not be negative");
  require(pilot_workers >= 0 && pilot_batch >= 0,
          "--pilot-workers and --pilot-batch must not be negative (0: by the objective)");
  require(local_price_per_hour >= 0, "--price-per-hour must not be negative");
  require(watch_every_steps >= 1, "--watch-every must be at least 1 step");
  require(watch_every_s > 0, "--watch-every-seconds must be positive");
  require(synthetic_size >= 0, "--synthetic-size must not be negative");
  require(image_size >= 0, "--image-size must not be negative (0: the data's own, 224 for an image folder)");
  require(eval_crop > 0 && eval_crop <= 1, "--eval-crop must be in (0, 1]");
  require(common::canonical_dataset_name(dataset) != "imagefolder" || !data_dir.empty(),
          "--dataset imagefolder needs --data-dir: a folder of train/ and val/, or of one folder per class");
  require(eval_every_epochs > 0, "--eval-every-epochs must be positive");
  require(eval_average >= 0 && eval_average < 1, "--eval-average must be in [0, 1) (0: the weights themselves)");
  require(validation_size >= -1, "--validation-size must be a sample count, 0 (the test split) or -1 (a tenth)");
  require(min_saving >= 0 && restart_cost_s >= 0, "--min-saving and --restart-cost must not be negative");
  require(max_epochs > 0, "--max-epochs must be positive");
  require(give_up_after >= 0 && give_up_after <= 1, "--give-up-after must be a share of --max-epochs in [0, 1]");
  require(on_out_of_reach == "stop" || on_out_of_reach == "continue", "--on-out-of-reach must be stop or continue");
  require(max_retries >= 0, "--max-retries must not be negative");
  require(progress == "auto" || progress == "bar" || progress == "lines" || progress == "none",
          "--progress must be auto, bar, lines or none");
  if (!start_at.empty()) parse_manual_config(start_at);
  require(start_on.empty() || !start_at.empty(), "--start-on places --start-at's configuration: give --start-at too");
  if (!start_on.empty()) parse_manual_placement(start_on);
  // A schedule given by hand starts where --start-at says; --no-replan keeps it as given.
  require(then_at.empty() || !start_at.empty(), "--then-at moves on from --start-at's configuration: give --start-at too");
  if (!then_at.empty()) {
    const double at = parse_manual_move(then_at).epochs, end = to_target() ? max_epochs : epochs;
    require(at < end, fmt::format("--then-at moves at epoch {:g}, but the job ends by epoch {:g}", at, end));
  }
  require(then_on.empty() || !then_at.empty(), "--then-on places --then-at's configuration: give --then-at too");
  if (!then_on.empty()) parse_manual_placement(then_on, "--then-on");
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
  return {{"model", o.model},
          {"dataset", o.dataset},
          {"data_dir", o.data_dir},
          {"target_accuracy", o.target_accuracy},
          {"epochs", o.epochs},
          {"objective", o.objective},
          {"resources", o.resources},
          {"backend", o.backend},
          {"device", o.device},
          {"cluster_state", o.cluster_state},
          {"out_dir", o.out_dir},
          {"data_roots", o.data_roots},
          {"optimizer", o.optimizer},
          {"lr", o.lr},
          {"reference_batch", o.reference_batch},
          {"lr_scaling", o.lr_scaling},
          {"momentum", o.momentum},
          {"weight_decay", o.weight_decay},
          {"warmup_epochs", o.warmup_epochs},
          {"warmup_at_reference", o.warmup_at_reference},
          {"seed", o.seed},
          {"profile_path", o.profile_path},
          {"profile_budget_s", o.profile_budget_s},
          {"profile_cache", o.profile_cache},
          {"pilot_steps", o.pilot_steps},
          {"pilot_workers", o.pilot_workers},
          {"pilot_batch", o.pilot_batch},
          {"noise_growth", o.noise_growth},
          {"loss_forecast", o.loss_forecast},
          {"epochs_floor", o.epochs_floor},
          {"history", o.history},
          {"history_path", o.history_path},
          {"forecast_with_prior", o.forecast_with_prior},
          {"forecast_exponent_prior", o.forecast_exponent_prior},
          {"clock_times", o.clock_times},
          {"local_price_per_hour", o.local_price_per_hour},
          {"watch_every_steps", o.watch_every_steps},
          {"watch_every_s", o.watch_every_s},
          {"synthetic_size", o.synthetic_size},
          {"image_size", o.image_size},
          {"eval_crop", o.eval_crop},
          {"augment", o.augment},
          {"eval_every_epochs", o.eval_every_epochs},
          {"validation_size", o.validation_size},
          {"evaluations_from_epoch_start", o.evaluations_from_epoch_start},
          {"eval_average", o.eval_average},
          {"min_saving", o.min_saving},
          {"restart_cost_s", o.restart_cost_s},
          {"replan", o.replan},
          {"max_epochs", o.max_epochs},
          {"give_up_after", o.give_up_after},
          {"on_out_of_reach", o.on_out_of_reach},
          {"max_retries", o.max_retries},
          {"start_at", o.start_at},
          {"start_on", o.start_on},
          {"then_at", o.then_at},
          {"then_on", o.then_on}};
}

TuneOptions tune_options_from_json(const nlohmann::json& j) {
  TuneOptions o;
  const auto get = [&j](const char* key, auto& field) {
    if (j.contains(key)) j.at(key).get_to(field);
  };
  get("model", o.model);
  get("dataset", o.dataset);
  get("data_dir", o.data_dir);
  get("target_accuracy", o.target_accuracy);
  get("epochs", o.epochs);
  get("objective", o.objective);
  get("resources", o.resources);
  get("backend", o.backend);
  get("device", o.device);
  get("cluster_state", o.cluster_state);
  get("out_dir", o.out_dir);
  get("data_roots", o.data_roots);
  get("optimizer", o.optimizer);
  get("lr", o.lr);
  get("reference_batch", o.reference_batch);
  get("lr_scaling", o.lr_scaling);
  get("momentum", o.momentum);
  get("weight_decay", o.weight_decay);
  get("warmup_epochs", o.warmup_epochs);
  // A job written before the option warmed up at every batch: it goes on so.
  o.warmup_at_reference = j.value("warmup_at_reference", true);
  get("seed", o.seed);
  get("profile_path", o.profile_path);
  get("profile_budget_s", o.profile_budget_s);
  get("profile_cache", o.profile_cache);
  get("pilot_steps", o.pilot_steps);
  get("pilot_workers", o.pilot_workers);
  get("pilot_batch", o.pilot_batch);
  // A job written before the option planned with B_noise as read: resumed or
  // replayed, it goes on as it ran.
  o.noise_growth = j.value("noise_growth", false);
  o.loss_forecast = j.value("loss_forecast", false);
  o.epochs_floor = j.value("epochs_floor", false);
  o.history = j.value("history", false);
  get("history_path", o.history_path);
  o.forecast_with_prior = j.value("forecast_with_prior", false);
  o.forecast_exponent_prior = j.value("forecast_exponent_prior", false);
  o.clock_times = j.value("clock_times", false);
  get("local_price_per_hour", o.local_price_per_hour);
  get("watch_every_steps", o.watch_every_steps);
  get("watch_every_s", o.watch_every_s);
  get("synthetic_size", o.synthetic_size);
  // Jobs written before these were kept ran with the defaults when resumed.
  get("image_size", o.image_size);
  get("eval_crop", o.eval_crop);
  get("augment", o.augment);
  get("eval_every_epochs", o.eval_every_epochs);
  // A job written before the option evaluated the test split: resumed or replayed, it goes on so.
  o.validation_size = j.value("validation_size", int64_t{0});
  o.evaluations_from_epoch_start = j.value("evaluations_from_epoch_start", false);
  o.eval_average = j.value("eval_average", 0.0);  // before the option: the weights themselves
  get("min_saving", o.min_saving);
  get("restart_cost_s", o.restart_cost_s);
  get("replan", o.replan);
  get("max_epochs", o.max_epochs);
  get("give_up_after", o.give_up_after);
  get("on_out_of_reach", o.on_out_of_reach);
  get("max_retries", o.max_retries);
  get("start_at", o.start_at);
  get("start_on", o.start_on);
  get("then_at", o.then_at);
  get("then_on", o.then_on);
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
  const int64_t n = o.validation_size >= 0 ? o.validation_size : std::min(kMostByDefault, train_samples / 10);
  if (2 * n > train_samples) {
    throw std::invalid_argument(fmt::format(
        "--validation-size {} would leave fewer than half of the {} training samples to train on", n, train_samples));
  }
  return n;
}

double launch_warmup_epochs(const TuneOptions& o, int64_t global_batch) {
  return (o.warmup_at_reference || global_batch > o.reference_batch) ? o.warmup_epochs : 0.0;
}

double evaluations_per_epoch(const TuneOptions& o) { return 1 / o.eval_every_epochs; }

int64_t evaluation_interval_steps(const TuneOptions& o, int64_t train_samples, int64_t global_batch) {
  const double steps_per_epoch =
      std::ceil(static_cast<double>(std::max<int64_t>(1, train_samples)) / static_cast<double>(std::max<int64_t>(1, global_batch)));
  return std::max<int64_t>(1, std::llround(o.eval_every_epochs * steps_per_epoch));
}

PilotLayout pilot_layout(const TuneOptions& o) {
  PilotLayout p;
  p.workers = o.pilot_workers > 0 ? o.pilot_workers
              : plan::parse_objective(o.objective).kind == plan::Objective::Kind::Fastest ? 2
                                                                                          : 1;
  p.batch_per_worker = o.pilot_batch > 0 ? o.pilot_batch : std::max<int64_t>(1, o.reference_batch / p.workers);
  return p;
}

int64_t pilot_length(int64_t pilot_steps, int64_t evaluation_interval) {
  if (evaluation_interval > pilot_steps && 2 * evaluation_interval <= 3 * pilot_steps) return evaluation_interval;
  return pilot_steps;
}

}  // namespace tula::tune
