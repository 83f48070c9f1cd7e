#include "tune/option_schema.hpp"

#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/engine_names.hpp"
#include "common/number_range.hpp"

namespace tula::tune {
namespace {

using nlohmann::json;

template <auto M>
OptionValue member(TuneOptions& o) {
  return &(o.*M);
}
template <auto M, auto N>
OptionValue nested(TuneOptions& o) {
  return &((o.*M).*N);
}
// A field of one of TuneOptions' four parts: in_job<&J::model>.
using J = TuneJob;
using T = TuneTraining;
using P = TunePilot;
using W = TuneWatch;
template <auto F>
constexpr OptionField in_job = nested<&TuneOptions::job, F>;
template <auto F>
constexpr OptionField in_training = nested<&TuneOptions::training, F>;
template <auto F>
constexpr OptionField in_pilot = nested<&TuneOptions::pilot, F>;
template <auto F>
constexpr OptionField in_watch = nested<&TuneOptions::watch, F>;

// Longest path a spec may name (Linux's PATH_MAX) and longest other string.
constexpr size_t kPathChars = 4096;
constexpr size_t kNameChars = 64;

// Reasons for the bounds are in docs/api.md ("Job specs").
constexpr double kMaxEpochs = 10000;
constexpr double kMaxSeconds = 86400;  // a day
constexpr uint64_t kMaxSteps = 10'000'000;
constexpr uint64_t kMaxSamples = 100'000'000;

OptionSpec spec(const char* name, FieldKind kind, OptionField f, const char* help) {
  OptionSpec s;
  s.name = name;
  s.kind = kind;
  s.field = f;
  s.help = help;
  return s;
}
OptionSpec text(const char* name, size_t max_chars, OptionField f, const char* help) {
  OptionSpec s = spec(name, FieldKind::Text, f, help);
  s.max_chars = max_chars;
  return s;
}
OptionSpec path(const char* name, OptionField f, const char* help) {
  OptionSpec s = spec(name, FieldKind::Path, f, help);
  s.max_chars = kPathChars;
  s.show_default = false;
  return s;
}
OptionSpec flag(const char* name, OptionField f, const char* help) {
  OptionSpec s = spec(name, FieldKind::Flag, f, help);
  s.negated = std::string(name).rfind("no_", 0) == 0;
  s.show_default = false;
  return s;
}
// From lo to hi, both included.
OptionSpec number(const char* name, double lo, double hi, OptionField f, const char* help) {
  OptionSpec s = spec(name, FieldKind::Number, f, help);
  s.range = {lo, hi};
  return s;
}
// Within a range declared with the commands that share it (common/number_range.hpp).
OptionSpec ranged(const char* name, const common::NumberRange& r, OptionField f, const char* help) {
  OptionSpec s = spec(name, FieldKind::Number, f, help);
  s.range = r;
  return s;
}
// Above 0 (excluded), up to hi.
OptionSpec positive(const char* name, double hi, OptionField f, const char* help) {
  return ranged(name, {0, hi, true, false}, f, help);
}
// From lo, below hi (excluded).
OptionSpec below(const char* name, double lo, double hi, OptionField f, const char* help) {
  return ranged(name, {lo, hi, false, true}, f, help);
}
OptionSpec integer(const char* name, uint64_t lo, uint64_t hi, OptionField f, const char* help) {
  OptionSpec s = spec(name, FieldKind::Integer, f, help);
  s.integer_range = {lo, hi};
  return s;
}

// Modifiers, read in the table as words.
OptionSpec keyed(OptionSpec s, const char* key) {
  s.json_key = key;
  return s;
}
OptionSpec tune_only(OptionSpec s) {
  s.in_job_spec = false;
  return s;
}
OptionSpec recorded_before(OptionSpec s, json value) {
  s.recorded_before = std::move(value);
  return s;
}
// How recorded jobs ran, kept in tune.json; no flag sets it.
OptionSpec record_only(OptionSpec s) {
  s.in_cli = false;
  s.in_job_spec = false;
  return s;
}
OptionSpec to_train(OptionSpec s, ToTrain when = ToTrain::Always) {
  s.to_train = when;
  return s;
}
OptionSpec unset_at(OptionSpec s, int64_t value) {
  s.unset = value;
  return s;
}
OptionSpec both_ways(OptionSpec s) {
  s.both_ways = true;
  return s;
}
OptionSpec hide_default(OptionSpec s) {
  s.show_default = false;
  return s;
}

std::string dataset_help() {
  return common::join_names(common::dataset_names()) + " (default fashion-mnist)";
}

// The job: what trains on what, to what goal, where.
std::vector<OptionSpec> job_options() {
  static const std::string datasets = dataset_help();
  return {
    to_train(hide_default(text("model", kPathChars, in_job<&J::model>,
                               "Model from `tula models`, or a TorchScript file PATH.pt (docs/models.md; default "
                               "small_cnn)"))),
    to_train(hide_default(text("dataset", kNameChars, in_job<&J::dataset>, datasets.c_str()))),
    path("data_dir", in_job<&J::data_dir>, "Directory of the data set's files (default: its usual place)"),
    to_train(ranged("target_accuracy", common::kTargetAccuracy, in_job<&J::target_accuracy>,
                    "Train until the accuracy on the validation split (--validation-size; 0: the test split) "
                    "reaches this (0-1; 0: no target)"),
             ToTrain::WhenSet),
    number("epochs", 0, kMaxEpochs, in_job<&J::epochs>, "Or train for this many epochs"),
    text("objective", kNameChars, in_job<&J::objective>, "knee, fastest, cheapest, deadline=H (hours) or budget=USD"),
    text("resources", kPathChars, in_job<&J::resources>, "local (this machine) or a catalog JSON of machine types"),
    recorded_before(text("device", kNameChars, in_job<&J::device>,
                         "cpu, cuda or auto (CUDA where a GPU is visible): where it profiles and trains"),
                    "cpu"),
    to_train(recorded_before(text("precision", kNameChars, in_job<&J::precision>,
                                  "fp32, bf16 or fp16 (CUDA only, with a dynamic loss scale): the forward pass "
                                  "and loss under autocast"),
                             "fp32")),
    tune_only(text("backend", kNameChars, in_job<&J::backend>,
                   "Where workers run: local, slurm, or emulated (Slurm on the nodes of scripts/emulated-cluster)")),
    tune_only(text("cluster_state", kPathChars, in_job<&J::cluster_state>,
                   "With --backend emulated: the cluster's state file (default /run/tula-emu/state.json)")),
    tune_only(keyed(text("out", kPathChars, in_job<&J::out_dir>,
                         "The job's directory: profile, checkpoints, metrics, report"),
                    "out_dir")),
    tune_only(keyed(hide_default(spec("data_root", FieldKind::List, in_job<&J::data_roots>,
                               "Every path given (--data-dir, --profile, --resources) must resolve under one of "
                               "these directories, checked again as it is opened (repeatable; `tula serve` gives "
                               "its own)")),
                    "data_roots")),
  };
}

// How it trains: the rate is tuned at reference_batch and the optimizer or the rule scales it.
std::vector<OptionSpec> training_options() {
  return {
    to_train(text("optimizer", kNameChars, in_training<&T::optimizer>, "ags, sgd, lars or lamb (docs/ags.md)")),
    to_train(positive("lr", 100, in_training<&T::lr>, "Learning rate at --reference-batch")),
    to_train(integer("reference_batch", 1, kMaxBatch, in_training<&T::reference_batch>,
                     "Global batch at which --lr was tuned")),
    to_train(text("lr_scaling", kNameChars, in_training<&T::lr_scaling>,
                  "Scale --lr from --reference-batch to the global batch: none (AGS scales itself), linear or sqrt")),
    to_train(below("momentum", 0, 1, in_training<&T::momentum>, "Momentum (LAMB: its first-moment decay beta1)")),
    to_train(number("weight_decay", 0, 1, in_training<&T::weight_decay>, "Weight decay")),
    number("warmup_epochs", 0, kMaxEpochs, in_training<&T::warmup_epochs>,
           "Linear warmup epochs of a launch whose global batch is above --reference-batch"),
    // A job written before the option warmed up at every batch: it goes on so.
    recorded_before(flag("warmup_at_reference", in_training<&T::warmup_at_reference>,
                         "Warm up launches at or below --reference-batch too (the rate there is the tuned one)"),
                    true),
    to_train(integer("seed", 0, std::numeric_limits<uint64_t>::max(), in_training<&T::seed>,
                     "Seed of weights, sample order, augmentation and dropout")),
  };
}

// The profile and the pilot.
std::vector<OptionSpec> pilot_options() {
  return {
    keyed(path("profile", in_pilot<&P::profile_path>,
               "Reuse this profile (measured on this hardware) instead of profiling"),
          "profile_path"),
    keyed(positive("profile_budget", kMaxSeconds, in_pilot<&P::profile_budget_s>, "Seconds the quick profile may take"),
          "profile_budget_s"),
    tune_only(keyed(flag("no_profile_cache", in_pilot<&P::profile_cache>,
                         "Measure a new quick profile instead of the cached one of this model, input and machine"),
                    "profile_cache")),
    integer("pilot_steps", 0, 100'000, in_pilot<&P::pilot_steps>,
            "Steps of the pilot segment (0: none); up to the first evaluation when that is within 1.5x"),
    unset_at(integer("pilot_workers", 1, 1024, in_pilot<&P::pilot_workers>,
                     "Workers of the pilot (0: by the objective: where the backend places nodes, the layout it picks "
                     "at --reference-batch; else one, at the default layout, two for --objective fastest)"),
             0),
    unset_at(integer("pilot_batch", 1, kMaxBatch, in_pilot<&P::pilot_batch>,
                     "Per-worker batch of the pilot (0: --reference-batch over the pilot's workers)"),
             0),
    keyed(number("price_per_hour", 0, 10'000, in_job<&J::local_price_per_hour>,
                 "Price of this machine per hour, with --resources local"),
          "local_price_per_hour"),
  };
}

// Forecasting and planning; most of these are ablations, or how recorded jobs ran.
std::vector<OptionSpec> forecast_options() {
  using O = TuneOptions;
  using R = ReplaySwitches;
  return {
    tune_only(recorded_before(
        keyed(flag("no_noise_growth", nested<&O::replay, &R::noise_growth>,
                   "Plan with the pilot's gradient noise scale as read, not grown over the job"),
              "noise_growth"),
        false)),
    tune_only(both_ways(flag("loss_forecast", in_pilot<&P::loss_forecast>,
                             "Forecast the target from the training loss too and plan with the geometric mean of "
                             "the two forecasts (default: the evaluations alone)"))),
    tune_only(recorded_before(
        keyed(flag("no_epochs_floor", nested<&O::replay, &R::epochs_floor>,
                   "Let batches below --reference-batch need fewer epochs, as the noise-scale law says for a rate "
                   "tuned at each batch"),
              "epochs_floor"),
        false)),
    tune_only(recorded_before(
        keyed(flag("no_history", in_pilot<&P::history>,
                   "Plan with the stated prior (E_min 2 epochs) and leave no line in the history"),
              "history"),
        false)),
    tune_only(keyed(text("history", kPathChars, in_pilot<&P::history_path>,
                         "Earlier jobs' epochs to their targets, this job's prior (default: job-history.jsonl "
                         "beside the profile cache); a job that reaches its target adds its own"),
                    "history_path")),
    tune_only(recorded_before(
        keyed(
            [] {
              auto s = flag("forecast_alone", nested<&O::replay, &R::forecast_with_prior>,
                            "Take the target's crossing from the forecast alone once there is one, not weighed with "
                            "the prior");
              s.negated = true;  // given, the forecast is not weighed with the prior
              return s;
            }(),
            "forecast_with_prior"),
        false)),
    tune_only(recorded_before(
        keyed(flag("no_exponent_prior", nested<&O::replay, &R::forecast_exponent_prior>,
                   "Fit the forecast's power law to the evaluations alone (from two on), without the prior on its "
                   "exponent that lets the pilot's one evaluation forecast"),
              "forecast_exponent_prior"),
        false)),
    record_only(recorded_before(flag("clock_times", nested<&O::replay, &R::clock_times>, ""), false)),
  };
}

// Watching, evaluating and re-planning.
std::vector<OptionSpec> watch_options() {
  using O = TuneOptions;
  using R = ReplaySwitches;
  return {
    keyed(integer("watch_every", 1, kMaxSteps, in_watch<&W::watch_every_steps>,
                  "Compare with the plan and re-plan every this many steps"),
          "watch_every_steps"),
    keyed(positive("watch_every_seconds", kMaxSeconds, in_watch<&W::watch_every_s>, "... or every this many seconds"),
          "watch_every_s"),
    to_train(hide_default(integer("synthetic_size", 0, kMaxSamples, in_job<&J::synthetic_size>,
                                  "With --dataset synthetic (timing only): training samples")),
             ToTrain::WhenSet),
    to_train(hide_default(integer("image_size", 0, 4096, in_job<&J::image_size>,
                                  "Resize images to this size (0: the data's size, raised to the model's minimum; imagefolder: its crop size, 0: 224)")),
             ToTrain::WhenSet),
    positive("eval_crop", 1, in_job<&J::eval_crop>,
             "With --dataset imagefolder: the evaluation's centre crop (1: the whole image; 0.875: ImageNet's)"),
    to_train(keyed(both_ways(flag("no_augment", in_job<&J::augment>,
                                  "Random crop and flip on real data sets (imagefolder: RandomResizedCrop); "
                                  "--no-augment: none")),
                   "augment"),
             ToTrain::WhenSet),
    positive("eval_every_epochs", kMaxEpochs, in_watch<&W::eval_every_epochs>,
             "Evaluate every this many epochs (and at each epoch's end)"),
    // A job written before the option evaluated the test split: resumed or replayed, it goes on so.
    recorded_before(
        [] {
          auto s = integer("validation_size", 0, kMaxSamples, in_watch<&W::validation_size>,
                           "Training samples held out for the accuracy curve and the target (-1: a tenth, at most "
                           "5000; 0: the test split); the test split is then evaluated once, at the end");
          s.unset = -1;
          return s;
        }(),
        0),
    record_only(recorded_before(
        flag("evaluations_from_epoch_start", nested<&O::replay, &R::evaluations_from_epoch_start>, ""), false)),
    // Before the option: the weights themselves.
    to_train(recorded_before(ranged("eval_average", common::kEvalAverage, in_watch<&W::eval_average>,
                                    "Evaluate (and export) a moving average of the weights with this decay, ramped in as "
                                    "min(DECAY, (1 + step) / (10 + step)); 0: the weights themselves"),
                             0.0),
             ToTrain::WhenSet),
    number("min_saving", 0, 1, in_watch<&W::min_saving>,
           "Resize (also from the pilot to the plan's choice) only for a predicted saving above this share of what "
           "is left"),
    keyed(number("restart_cost", 0, kMaxSeconds, in_watch<&W::restart_cost_s>,
                 "Seconds a resize is assumed to cost until one is measured"),
          "restart_cost_s"),
    keyed(flag("no_replan", in_watch<&W::replan>, "Train at the first choice throughout"), "replan"),
    positive("max_epochs", kMaxEpochs, in_watch<&W::max_epochs>, "Give the target up past this many epochs"),
    tune_only(number("give_up_after", 0, 1, in_watch<&W::give_up_after>,
                     "Never judge the target out of reach before this share of --max-epochs is done")),
    tune_only(text("on_out_of_reach", kNameChars, in_watch<&W::on_out_of_reach>,
                   "stop, or continue: write the verdict in the report and train on (to check it)")),
    integer("max_retries", 0, 1000, in_watch<&W::max_retries>, "Relaunches from the checkpoint after a worker dies"),
    text("start_at", kNameChars, in_watch<&W::start_at>,
         "Start at WORKERSxBATCH[xACCUMULATION] instead of the plan's choice"),
    text("start_on", kNameChars, in_watch<&W::start_on>,
         "With --start-at: on TYPE[:NODES] of the --resources catalog (default: its first type, 1 node)"),
    tune_only(text("then_at", kNameChars, in_watch<&W::then_at>,
                   "With --start-at: move to WORKERSxBATCH[xACCUMULATION] once EPOCHS are done (EPOCHS:WxB, e.g. "
                   "0.5:2x128)")),
    tune_only(text("then_on", kNameChars, in_watch<&W::then_on>,
                   "With --then-at: on TYPE[:NODES] (default: where --start-at runs)")),
    [] {
      auto s = tune_only(text("progress", kNameChars, member<&O::progress>, "auto, bar, lines or none"));
      s.in_record = false;
      return s;
    }(),
  };
}

std::vector<OptionSpec> make_table() {
  std::vector<OptionSpec> table;
  for (auto section : {job_options, training_options, pilot_options, forecast_options, watch_options}) {
    for (auto& s : section()) table.push_back(std::move(s));
  }
  return table;
}

// The value as a message quotes it: a number as the shortest text that reads back.
std::string value_text(const json& v) {
  if (v.is_number_float()) return exact_number(v.get<double>());
  return v.dump();
}

}  // namespace

std::string OptionSpec::flag() const {
  std::string f = std::string("--") + name;
  for (auto& c : f)
    if (c == '_') c = '-';
  return f;
}

const std::vector<OptionSpec>& option_specs() {
  static const std::vector<OptionSpec> table = make_table();
  return table;
}

const OptionSpec* find_option(const std::string& name) {
  for (const auto& s : option_specs())
    if (name == s.name) return &s;
  return nullptr;
}

const OptionSpec& option(const std::string& name) {
  const OptionSpec* s = find_option(name);
  if (!s) throw std::logic_error("no option '" + name + "' in the schema");
  return *s;
}

std::string describe_option(const OptionSpec& s) {
  switch (s.kind) {
    case FieldKind::Text: return fmt::format("a string of at most {} characters", s.max_chars);
    case FieldKind::Path: return fmt::format("an absolute path (a string of at most {} characters)", s.max_chars);
    case FieldKind::Flag: return "true or false";
    case FieldKind::List: return "a list of strings";
    case FieldKind::Integer:
      return fmt::format("an integer from {} to {}", s.integer_range.lo, s.integer_range.hi);
    case FieldKind::Number: break;
  }
  return common::describe_range(s.range);
}

bool option_accepts(const OptionSpec& s, const json& v) {
  switch (s.kind) {
    case FieldKind::Text:
    case FieldKind::Path: return v.is_string() && v.get_ref<const std::string&>().size() <= s.max_chars;
    case FieldKind::Flag: return v.is_boolean();
    case FieldKind::List: return v.is_array();
    case FieldKind::Integer: {
      // Parsed text gives number_unsigned for n >= 0; a value built in C++ may be a signed one.
      const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      return whole && v.get<uint64_t>() >= s.integer_range.lo && v.get<uint64_t>() <= s.integer_range.hi;
    }
    case FieldKind::Number: break;
  }
  return v.is_number() && common::in_range(s.range, v.get<double>());
}

std::optional<std::string> bound_refusal(const OptionSpec& s, const json& v) {
  if (option_accepts(s, v)) return std::nullopt;
  return "must be " + describe_option(s) + " (got " + value_text(v) + ")";
}

void check_option_bound(const OptionSpec& s, OptionValue field) {
  if (s.kind != FieldKind::Number && s.kind != FieldKind::Integer) return;
  const json value = field_json(field);
  if (s.unset && value == json(*s.unset)) return;  // not given
  if (const auto refusal = bound_refusal(s, value)) {
    throw std::invalid_argument(s.flag() + " " + *refusal);
  }
}

void check_option_bounds(const TuneOptions& o) {
  // The fields are only read: the accessor's one signature serves reads and writes.
  for (const auto& s : option_specs()) check_option_bound(s, s.field(const_cast<TuneOptions&>(o)));
}

json field_json(OptionValue field) {
  return std::visit([](auto* p) { return json(*p); }, field);
}

json option_json(const OptionSpec& s, const TuneOptions& o) {
  // The field is only read here: the accessor's one signature serves reads and writes.
  return field_json(s.field(const_cast<TuneOptions&>(o)));
}

void set_option(const OptionSpec& s, TuneOptions& o, const json& v) {
  std::visit([&v](auto* p) { v.get_to(*p); }, s.field(o));
}

std::string exact_number(double v) { return common::exact_number(v); }

std::string option_text(const OptionSpec& s, const TuneOptions& o) {
  return std::visit(
      [](auto* p) -> std::string {
        using T = std::remove_pointer_t<decltype(p)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return *p;
        } else if constexpr (std::is_same_v<T, double>) {
          return exact_number(*p);
        } else if constexpr (std::is_same_v<T, bool>) {
          return *p ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          std::string out;
          for (const auto& item : *p) out += (out.empty() ? "" : ",") + item;
          return out;
        } else {
          return std::to_string(*p);  // integers: exact
        }
      },
      s.field(const_cast<TuneOptions&>(o)));
}

void append_train_options(std::vector<std::string>& args, const TuneOptions& o) {
  for (const auto& s : option_specs()) {
    if (s.to_train == ToTrain::No) continue;
    const json value = option_json(s, o);
    if (s.kind == FieldKind::Flag) {
      if (value.get<bool>() != s.negated) args.push_back(s.flag());  // given: set, or cleared where negated
      continue;
    }
    const bool unset = value.is_string() ? value.get_ref<const std::string&>().empty() : value == json(0);
    if (s.to_train == ToTrain::WhenSet && unset) continue;
    args.push_back(s.flag());
    args.push_back(option_text(s, o));
  }
}

void append_option(std::vector<std::string>& args, const TuneOptions& o, const std::string& name) {
  const OptionSpec& s = option(name);
  args.push_back(s.flag());
  args.push_back(option_text(s, o));
}

}  // namespace tula::tune
