#include "cli/auto_config.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "distributed/rendezvous.hpp"
#include "plan/local_catalog.hpp"
#include "plan/planner.hpp"
#include "plan/single_node.hpp"
#include "predict/hardware_match.hpp"
#include "predict/profile_cache.hpp"
#include "profile/cached_profile.hpp"
#include "profile/profiler.hpp"

namespace tula::cli {
namespace {

constexpr const char* kPrefix = "tula: auto: ";

// The quick profile `tula profile --quick` would take of what this run trains.
profile::ProfileOptions profile_options_for(const train::TrainOptions& t) {
  profile::ProfileOptions o;
  o.model = t.model.name;
  o.dropout = t.model.dropout;
  o.data.dataset = t.data.dataset;
  o.data.data_dir = t.data.data_dir;
  if (t.data.dataset == "synthetic") {
    // As the trainer builds its synthetic splits (train/trainer.cpp).
    o.data.input_shape = {t.data.synthetic_channels, t.data.synthetic_height, t.data.synthetic_width};
    o.data.classes = t.data.synthetic_classes;
    o.data.train_samples = t.data.synthetic_size;
    o.data.test_samples = std::max<int64_t>(1, t.data.synthetic_size / 5);
  }
  o.data.image_size = t.data.image_size;
  o.quick = true;
  // The profile measures the device the run trains on: a CUDA run plans from
  // a profile of its GPU, one worker per GPU (predict::profiled_machine).
  o.device = t.execution.device;
  o.precision = t.step.precision;  // timed as the run will step
  o.communication.bucket_mb = static_cast<double>(t.reducer.bucket_bytes) / (1 << 20);
  o.communication.first_bucket_mb = static_cast<double>(t.reducer.first_bucket_bytes) / (1 << 20);
  return o;
}

std::string plural(int64_t n, const std::string& word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

std::string interval_text(const predict::Interval& i) {
  return common::format_seconds(i.estimate) + " [" + common::format_seconds(i.lo) + ", " +
         common::format_seconds(i.hi) + "]";
}

}  // namespace

std::optional<int64_t> parse_count_or_auto(const std::string& text, const std::string& option, int64_t min_value) {
  if (text == "auto") return std::nullopt;
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size()) {
    throw std::invalid_argument(option + ": '" + text + "' is neither a whole number nor 'auto'");
  }
  if (v < min_value) {
    throw std::invalid_argument(fmt::format("{} must be at least {} (got {})", option, min_value, text));
  }
  return static_cast<int64_t>(v);
}

AutoChoice choose_configuration(const train::TrainOptions& t, const AutoRequest& request, std::ostream& out) {
  const std::string what = request.choose_batch ? "--batch-size auto" : "--nproc auto";
  if (!t.schedule.batch_schedule.empty()) {
    throw std::invalid_argument(what + " chooses one batch for the whole run; it cannot be combined with "
                                "--batch-schedule");
  }
  if (distributed::rendezvous_from_environment().world_size > 1) {
    throw std::invalid_argument(what + " is resolved by the process that starts the workers (`tula train --nproc "
                                "auto` or --nproc N); a worker of a job started elsewhere would choose on its own, "
                                "and its peers might choose differently: give the numbers");
  }
  if (!(request.price_per_hour >= 0)) throw std::invalid_argument("--price-per-hour must be non-negative");

  const auto po = profile_options_for(t);
  profile::validate(po);
  const auto here = predict::this_machine_cpu();
  AutoChoice choice;
  const auto say = [&out](const std::string& line) { out << kPrefix << line << std::endl; };
  const auto warn = [&out](const std::string& line) { out << "tula: warning: profile: " << line << std::endl; };
  auto cached = [&] {
    try {
      return profile::cached_quick_profile(po, request.reprofile, say, warn);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string(e.what()) + ", so nothing can be chosen; give --batch-size and --nproc as numbers");
    }
  }();
  choice.from_cache = cached.from_cache;
  choice.profile_path = cached.path;
  auto p = std::move(cached.profile);

  const auto catalog = plan::local_catalog(p, request.price_per_hour);
  const auto& machine = catalog.machines.front().spec;
  if (!request.choose_workers && request.workers > machine.max_workers_per_node) {
    throw std::invalid_argument(
        fmt::format("--nproc {}: the profile measured at most {} workers on this machine, and more cannot be "
                    "predicted; give --nproc auto or at most that many, or --batch-size as a number",
                    request.workers, machine.max_workers_per_node));
  }
  predict::PredictorOptions predictor;
  predictor.epochs = static_cast<double>(t.epochs);
  predictor.evaluations_per_epoch = t.evaluation.enabled ? 1 : 0;
  plan::FixedConfig fixed;
  if (!request.choose_workers) fixed.workers = request.workers;
  if (!request.choose_batch) fixed.batch_per_worker = request.batch_size;
  if (request.accumulation_steps > 0) fixed.accumulation_steps = request.accumulation_steps;
  const auto planner = plan::single_node_planner(p, catalog, predictor, fixed);
  const auto result = planner.plan(plan::Objective::knee());
  const auto& c = result.chosen_candidate().config;
  choice.workers = c.workers_per_node;
  choice.batch_per_worker = c.batch_per_worker;
  choice.accumulation_steps = c.accumulation_steps;

  const auto& pred = result.chosen_prediction;
  std::string given;
  if (!request.choose_workers) given += fmt::format(" --nproc {}", request.workers);
  if (!request.choose_batch) given += fmt::format(" --batch-size {}", request.batch_size);
  if (request.accumulation_steps > 0) given += fmt::format(" --accumulation-steps {}", request.accumulation_steps);
  out << fmt::format("{}chose {} x batch {} per worker x {} (global batch {}), the knee of time against cost for {} "
                     "on this machine ({}, {}/h)",
                     kPrefix, plural(choice.workers, "worker"), choice.batch_per_worker,
                     plural(choice.accumulation_steps, "accumulation step"), c.global_batch(),
                     plural(t.epochs, "epoch"), plural(here.cores, "core"),
                     common::format_money(request.price_per_hour));
  if (!given.empty()) out << " with" << given << " as given";
  out << "; profile " << (choice.from_cache ? "from the cache" : "measured now") << std::endl;
  out << fmt::format("{}predicted epoch time {}, iteration {} ({}% intervals); {} configurations considered", kPrefix,
                     interval_text(pred.epoch_s), interval_text(pred.per_step.iteration_s),
                     static_cast<int>(std::lround(100 * pred.level)), result.candidates.size())
      << std::endl;
  out << kPrefix << "why: " << result.notes.explanation << std::endl;
  out << fmt::format("{}training as if given{} --batch-size {} --accumulation-steps {}", kPrefix,
                     request.launch ? fmt::format(" --nproc {}", choice.workers) : "", choice.batch_per_worker,
                     choice.accumulation_steps)
      << std::endl;
  return choice;
}

namespace {

// Drops `name` and its value ("--name v", "--name=v"; for a short `alias`
// "-b v" and "-bv" too) from `args`.
std::vector<std::string> without(const std::vector<std::string>& args, const std::string& name,
                                 const std::string& alias, bool has_value) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == name || (!alias.empty() && a == alias)) {
      if (has_value) ++i;
      continue;
    }
    if (a.rfind(name + "=", 0) == 0) continue;
    if (has_value && !alias.empty() && a.size() > alias.size() && a.rfind(alias, 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace

std::vector<std::string> resolved_arguments(const std::vector<std::string>& args, const AutoChoice& choice,
                                            bool with_nproc) {
  auto out = without(args, "--batch-size", "-b", true);
  out = without(out, "--accumulation-steps", "", true);
  out = without(out, "--nproc", "", true);
  out = without(out, "--price-per-hour", "", true);
  out = without(out, "--reprofile", "", false);
  for (const std::string& a : {std::string("--batch-size"), std::to_string(choice.batch_per_worker),
                               std::string("--accumulation-steps"), std::to_string(choice.accumulation_steps)}) {
    out.push_back(a);
  }
  if (with_nproc) {
    out.push_back("--nproc");
    out.push_back(std::to_string(choice.workers));
  }
  return out;
}

}  // namespace tula::cli
