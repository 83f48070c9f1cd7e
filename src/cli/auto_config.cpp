#include "cli/auto_config.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "distributed/rendezvous.hpp"
#include "plan/local_catalog.hpp"
#include "plan/planner.hpp"
#include "predict/hardware_match.hpp"
#include "predict/profile_cache.hpp"
#include "profile/profiler.hpp"

namespace tula::cli {
namespace {

constexpr const char* kPrefix = "tula: auto: ";

// The quick profile `tula profile --quick` would take of what this run trains.
profile::ProfileOptions profile_options_for(const train::TrainOptions& t) {
  profile::ProfileOptions o;
  o.model = t.model.name;
  o.dropout = t.model.dropout;
  o.dataset = t.data.dataset;
  o.data_dir = t.data.data_dir;
  if (t.data.dataset == "synthetic") {
    // As the trainer builds its synthetic splits (train/trainer.cpp).
    o.input_shape = {t.data.synthetic_channels, t.data.synthetic_height, t.data.synthetic_width};
    o.classes = t.data.synthetic_classes;
    o.train_samples = t.data.synthetic_size;
    o.test_samples = std::max<int64_t>(1, t.data.synthetic_size / 5);
  }
  o.image_size = t.data.image_size;
  o.quick = true;
  o.bucket_mb = static_cast<double>(t.reducer.bucket_bytes) / (1 << 20);
  o.first_bucket_mb = static_cast<double>(t.reducer.first_bucket_bytes) / (1 << 20);
  return o;
}

predict::ProfileKey key_for(const profile::ProfileOptions& o, const train::TrainOptions& t,
                            const predict::HardwareInfo& here) {
  const auto in = profile::resolve_input(o);
  predict::ProfileKey k;
  k.model = o.model;
  k.input_shape = in.data_shape;
  const bool resized = in.data_shape.size() == 3 && (in.target.height != in.data_shape[1] || in.target.width != in.data_shape[2]);
  k.image_size = resized ? in.target.height : 0;
  k.classes = in.target.classes;
  k.train_samples = in.data.train_samples;
  k.test_samples = in.data.test_samples;
  k.buckets = {t.reducer.bucket_bytes, t.reducer.first_bucket_bytes};
  k.effort = "quick";
  k.hardware = here;
  return k;
}

std::string data_text(const predict::ProfileKey& k) {
  return k.model + " on " + k.shape_text() + " input, " + std::to_string(k.train_samples) + " training and " +
         std::to_string(k.test_samples) + " test samples";
}

std::string plural(int64_t n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string interval_text(const predict::Interval& i) {
  return common::format_seconds(i.estimate) + " [" + common::format_seconds(i.lo) + ", " +
         common::format_seconds(i.hi) + "]";
}

// The profile for `key`: the cached one, or one measured now and cached.
predict::Profile obtain_profile(const AutoRequest& request, const profile::ProfileOptions& po, const predict::ProfileKey& key,
                                const predict::HardwareInfo& here, AutoChoice& choice, std::ostream& out) {
  const predict::ProfileCache cache(predict::profile_cache_dir());
  choice.profile_path = cache.path_for(key);
  std::string why_measure;
  if (request.reprofile) {
    why_measure = "--reprofile";
  } else {
    auto hit = cache.find(key, here);
    if (hit.profile) {
      choice.from_cache = true;
      out << kPrefix << "reused the cached profile " << hit.path << " (measured " << hit.created
          << " on this hardware; --reprofile measures it again)" << std::endl;
      return std::move(*hit.profile);
    }
    why_measure = hit.miss_reason + " at " + hit.path;
  }
  out << kPrefix << "measuring a quick profile of " << data_text(key) << " (" << why_measure
      << "): `tula profile --quick`, run in this process" << std::endl;
  const auto start = common::Clock::now();
  const auto measure = [&] {
    return profile::run_profile(
        po, [&out](const std::string& line) { out << "  profile: " << line << std::endl; },
        [&out](const std::string& line) { out << "tula: warning: profile: " << line << std::endl; });
  };
  auto run = measure();
  if (!run.fitted) {
    // Mostly a burst of load from elsewhere during a short trial: one more
    // quick profile usually fits.
    out << kPrefix << "the quick profile's measurements do not support a fit (" << run.fit_error
        << "); measuring it once more" << std::endl;
    run = measure();
  }
  if (!run.fitted) {
    throw std::runtime_error("the quick profile's measurements do not support a fit, so nothing can be chosen (" +
                             run.fit_error + "); give --batch-size and --nproc as numbers");
  }
  const auto path = cache.store(key, profile::profile_document(run));
  out << kPrefix << "measured the profile in " << common::format_seconds(common::since(start)) << " and cached it at "
      << path << std::endl;
  return run.profile;
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
    throw std::invalid_argument(option + " must be at least " + std::to_string(min_value) + " (got " + text + ")");
  }
  return static_cast<int64_t>(v);
}

AutoChoice choose_configuration(const train::TrainOptions& t, const AutoRequest& request, std::ostream& out) {
  const std::string what = request.choose_batch ? "--batch-size auto" : "--nproc auto";
  if (t.execution.device != "cpu") {
    throw std::invalid_argument(what + " plans from a CPU profile of this machine; with --device " +
                                t.execution.device + " give --batch-size and --nproc as numbers");
  }
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
  const auto key = key_for(po, t, here);
  AutoChoice choice;
  auto p = obtain_profile(request, po, key, here, choice, out);

  const auto catalog = plan::local_catalog(p, request.price_per_hour);
  const auto& machine = catalog.machines.front().spec;
  if (!request.choose_workers && request.workers > machine.max_workers_per_node) {
    throw std::invalid_argument("--nproc " + std::to_string(request.workers) + ": the profile measured at most " +
                                std::to_string(machine.max_workers_per_node) +
                                " workers on this machine, and more cannot be predicted; give --nproc auto or at "
                                "most that many, or --batch-size as a number");
  }
  plan::PlannerOptions options;
  options.predictor.epochs = static_cast<double>(t.epochs);
  options.predictor.evaluate_each_epoch = t.evaluation.enabled;
  options.space.nodes = {1};
  if (!request.choose_workers) options.space.workers_per_node = {request.workers};
  if (!request.choose_batch) options.space.batch_per_worker = {request.batch_size};
  if (request.accumulation_steps > 0) options.space.accumulation_steps = {request.accumulation_steps};
  const plan::Planner planner(p, catalog, options);
  const auto result = planner.plan(plan::Objective::knee());
  const auto& c = result.chosen_candidate().config;
  choice.workers = c.workers_per_node;
  choice.batch_per_worker = c.batch_per_worker;
  choice.accumulation_steps = c.accumulation_steps;

  const auto& pred = result.chosen_prediction;
  std::ostringstream fixed;
  if (!request.choose_workers) fixed << " --nproc " << request.workers;
  if (!request.choose_batch) fixed << " --batch-size " << request.batch_size;
  if (request.accumulation_steps > 0) fixed << " --accumulation-steps " << request.accumulation_steps;
  out << kPrefix << "chose " << plural(choice.workers, "worker") << " x batch " << choice.batch_per_worker
      << " per worker x " << plural(choice.accumulation_steps, "accumulation step") << " (global batch "
      << c.global_batch() << "), the knee of time against cost for " << plural(t.epochs, "epoch") << " on this machine ("
      << plural(here.cores, "core") << ", " << common::format_money(request.price_per_hour) << "/h)";
  if (!fixed.str().empty()) out << " with" << fixed.str() << " as given";
  out << "; profile " << (choice.from_cache ? "from the cache" : "measured now") << std::endl;
  out << kPrefix << "predicted epoch time " << interval_text(pred.epoch_s) << ", iteration "
      << interval_text(pred.iteration_s) << " (" << static_cast<int>(std::lround(100 * pred.level))
      << "% intervals); " << result.candidates.size() << " configurations considered" << std::endl;
  out << kPrefix << "why: " << result.explanation << std::endl;
  out << kPrefix << "training as if given" << (request.launch ? " --nproc " + std::to_string(choice.workers) : "")
      << " --batch-size " << choice.batch_per_worker << " --accumulation-steps " << choice.accumulation_steps
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
