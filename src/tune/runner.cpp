#include "tune/runner.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/engine_names.hpp"
#include "common/input_roots.hpp"
#include "common/math_library.hpp"
#include "common/process.hpp"
#include "common/text.hpp"
#include "plan/catalog.hpp"
#include "plan/device_speed.hpp"
#include "plan/local_catalog.hpp"
#include "plan/objective.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "predict/error.hpp"
#include "predict/hardware_match.hpp"
#include "predict/profile.hpp"
#include "records/record_error.hpp"
#include "records/tune_report.hpp"
#include "records/tune_state.hpp"
#include "tune/backend.hpp"
#include "tune/batch_schedule_plan.hpp"
#include "tune/input_paths.hpp"
#include "tune/job_history.hpp"
#include "tune/job_ledger.hpp"
#include "tune/job_metrics.hpp"
#include "tune/launch_loop.hpp"
#include "tune/option_schema.hpp"
#include "tune/phase_machine.hpp"
#include "tune/pilot_placement.hpp"
#include "tune/refit.hpp"
#include "tune/report_html.hpp"
#include "tune/terminal.hpp"
#include "tune/tune_report.hpp"
#include "tune/watch.hpp"

namespace tula::tune {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using records::TuneOutcome;
using records::TunePhase;

namespace {

std::atomic<int> g_stop_signal{0};

using common::percent;
using common::unix_now;

// A file's text read by `parse`, an Error from it prefixed with the file's
// path (as predict::load_profile and plan::load_catalog say it).
template <class Error, class Parse>
auto parsed(const std::string& path, const std::string& text, const Parse& parse) {
  try {
    return parse(text);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

// The engine the runner starts: the `tula` binary for the workers, and the
// quick profile in this process.
struct Engine {
  std::string tula_binary;
  QuickProfiler profile_in_process;
};

// Where the job runs now: the catalog entry, the configuration, and whether
// a launch of its training holds those nodes (they are billed), or waits in
// the backend's queue for them (billed only where the catalog says so).
struct Holding {
  size_t machine = 0;
  predict::Config config;
  bool training = false;
  bool queued = false;
};

// The latest watch's outlook, which the progress line counts down from.
struct Outlook {
  std::optional<double> remaining_s;
  std::optional<records::SecondsRange> remaining_range;  // its range, where the watch had one
  double predicted_at = 0;  // job time when remaining_s was predicted
  std::string words;        // toward a target: the forecast against --max-epochs
};

// The launch running now: its record so far, and where its parts and its
// watches count from.
struct CurrentLaunch {
  records::SegmentRecord segment;
  size_t launches_before = 0;  // the metrics' launches read before it started
  double requested_at = 0;     // job time its workers were asked for
  double part_from = 0;        // the start of its pilot or training part
  bool start_up_measured = false;
  WatchCadence cadence{1, 0};
};

class Runner final : private LaunchWatcher {
 public:
  Runner(TuneOptions options, std::string tula_binary, QuickProfiler profile_in_process)
      : o_(std::move(options)),
        engine_{std::move(tula_binary), std::move(profile_in_process)},
        dir_(o_.job.out_dir),
        progress_(o_.progress),
        metrics_((fs::path(o_.job.out_dir) / "metrics.jsonl").string()),
        ledger_(unix_now(), o_.watch.restart_cost_s) {}

  TuneResult run();

 private:
  // Set-up and the phases before training.
  void open_directory();
  void load_state();
  void save_state();
  void check_inputs();
  // --data-dir for the profile and the launches, looked up again now (input_paths.hpp); "" when not given.
  std::string data_dir() const;
  void profile();
  // The profile `args` (`tula profile` flags) ask for, by profile_in_process_,
  // its lines to `log_path` as they come; a stop signal ends it at its next line.
  void quick_profile(const std::vector<std::string>& args, const std::string& log_path);
  void load_catalog();
  // The prior from earlier jobs of this setup (the stated one without them,
  // or with --no-history), and this job's own line once it got there.
  EpochsPrior epochs_prior();
  void record_history();
  std::vector<CurveLaunch> curve_launches() const;  // what trained this job's curve, for its history line
  std::string history_path() const;
  void start_at_given_config();
  void place_given_config(const ManualPlacement& placement);
  // The catalog entry `placement` names (`option` in errors), checked to hold
  // its node count and `workers_per_node` workers on each.
  size_t machine_for(const ManualPlacement& placement, int64_t workers_per_node, const std::string& option) const;
  // --then-at's move: where to, and after how many epochs.
  struct GivenMove {
    double epochs = 0;
    size_t machine = 0;
    predict::Config config;
  };
  GivenMove given_move() const;
  // The move --then-at asks for, once its epochs are done, if the job still
  // runs --start-at's configuration (else it moved already, or an online
  // re-plan moved it).
  std::optional<SegmentEnd> given_move_due(const predict::Config& config);
  size_t pilot_machine() const;  // the catalog entry the pilot runs on by the objective
  // Where the backend places nodes and --pilot-workers/--pilot-batch leave
  // it open: the layout the objective picks at the reference batch
  // (pilot_at_reference_batch); nullopt otherwise.
  std::optional<plan::Candidate> pilot_layout_by_objective() const;
  // Elsewhere: pilot_layout's workers and batch on the type pilot_machine picks.
  plan::Candidate pilot_on_type() const;
  // The pilot is the job's first launch, at a small configuration, measuring
  // the gradient noise scale, the step and the evaluation. The plan is made
  // once its steps are in, while its workers go on: where the plan keeps
  // them, they are the job's training, and no restart is paid.
  void set_up_pilot();
  bool pilot_done() const;
  std::optional<SegmentEnd> plan_after_pilot();
  bool initial_plan(bool pilot_running);
  TuneResult train();

  // One launch of the workers at `config`, watched until it ends or is
  // stopped (launch_loop.hpp); `label` "pilot" or "train".
  SegmentEnd run_segment(const predict::Config& config, const std::string& label);
  WorkerLaunch worker_launch(const predict::Config& config);
  std::vector<std::string> train_command(const predict::Config& config) const;
  void begin_segment(const predict::Config& config, const std::string& label);
  void end_segment(const SegmentEnd& end, const std::string& log_path);
  // LaunchWatcher: what the launch loop asks of the job at each poll.
  void read_progress(const RunningLaunch& running) override;
  std::optional<SegmentEnd> decide() override;
  int stop_signal() const override { return g_stop_signal.load(); }
  SegmentEnd interrupted(int signal) const override;
  // The launch's start-up, once its first step is in (JobLedger::measure_start_up).
  void measure_start_up();
  // While the pilot runs: once its steps are in, the plan; where the plan
  // keeps the pilot's workers, the pilot's record ends and the training's
  // begins in the same launch.
  std::optional<SegmentEnd> decide_in_pilot();
  // Every K steps: measured against predicted, re-fit, stop or resize (watch.hpp).
  std::optional<SegmentEnd> watch(const predict::Config& config);
  RunningJob running_job(const predict::Config& config) const;
  // The planned batch schedule's move, once the job's progress reaches it.
  std::optional<SegmentEnd> planned_move(const JobView& view, const predict::Config& config);
  NodeChoice node_choice() const {
    return backend_->places_nodes() ? NodeChoice::UpToMaxNodes : NodeChoice::One;
  }
  void record_replan(const records::ReplanRecord& entry);
  // After a launch failed: the nodes the backend offers now (Slurm's up and
  // idle ones), and where the job's layout no longer fits them, a move of
  // the rest of the job onto them (from its checkpoint; the trainer changes
  // the rate smoothly to the new batch).
  std::optional<SegmentEnd> replan_on_nodes_left(const std::string& failure);

  double now_s() const { return ledger_.job_time(unix_now()); }
  JobClock clock() const { return ledger_.clock(now_s()); }
  void account();  // the cost up to now, at what is held now
  void move_phase(PhaseEvent event) { phase_ = next_phase(phase_, event); }
  void note(const std::string& text) override;
  // A note a resumed job would otherwise add again.
  void note_once(const std::string& text);
  void show_progress(const predict::Config& config);
  TuneResult finish(TuneOutcome state, const std::string& reason, int exit_code);
  // A resumed job that had already finished: its summary, and nothing written.
  TuneResult already_finished();
  // A job whose tune.json says done and whose report was not written after
  // it (the process ended between the two): the report made from its records.
  TuneResult complete_finished_report();
  // Why a job that ran to its end succeeded (the report's reason).
  std::string success_reason() const;
  void write_report();
  // "validation" or "test": the split the curve, the forecast and the target read.
  std::string curve_split() const { return validation_samples_ > 0 ? "validation" : "test"; }
  // The test accuracy at the end: the final test after a validation curve, else the curve's last point.
  std::optional<double> final_accuracy() const;
  std::string final_test_words() const;  // ", final test accuracy X" where there is one
  // The training samples an epoch is (the validation split left out), and the epochs the job has done.
  double train_samples() const { return static_cast<double>(std::max<int64_t>(1, profile_.data.train_samples)); }
  double epochs_done() const { return metrics_.samples() / train_samples(); }

  TuneOptions o_;
  Engine engine_;
  fs::path dir_;
  TuneProgress progress_;
  JobMetrics metrics_;
  std::unique_ptr<Backend> backend_;

  records::TuneReport report_;
  TunePhase phase_ = TunePhase::New;
  JobLedger ledger_;
  int64_t pilot_steps_ = 0;  // the pilot's length (set_up_pilot)

  predict::Profile profile_;  // its train_samples less the validation split
  int64_t validation_samples_ = 0;
  plan::Catalog catalog_;
  std::optional<Refit> refit_;
  std::optional<predict::Predictor> prior_predictor_;  // the plan's models, before any re-fit
  Holding held_;
  CurrentLaunch launch_;
  Outlook outlook_;
  std::string declined_to_;  // the configuration a re-plan last declined, so it is recorded once
};

// ---- time and money -------------------------------------------------------

void Runner::account() {
  const double price =
      catalog_.machines.empty() ? o_.job.local_price_per_hour : catalog_.machines[held_.machine].spec.price_per_hour;
  const bool holds_nodes = held_.training && (!held_.queued || catalog_.queue_wait_billed);
  ledger_.accrue(now_s(), price, holds_nodes ? static_cast<double>(held_.config.nodes) : 1.0);
}

void Runner::note(const std::string& text) {
  report_.notes.push_back(text);
  progress_.say("note: " + text);
}

void Runner::note_once(const std::string& text) {
  if (std::find(report_.notes.begin(), report_.notes.end(), text) == report_.notes.end()) note(text);
}

// ---- state ----------------------------------------------------------------

void Runner::open_directory() {
  if (o_.resume) {
    if (!fs::exists(dir_ / "tune.json")) {
      throw std::invalid_argument("--resume " + dir_.string() + ": no tune job there (no tune.json)");
    }
    load_state();
    return;
  }
  if (fs::exists(dir_ / "tune.json")) {
    throw std::invalid_argument("--out " + dir_.string() +
                                " already holds a tune job; continue it with `tula tune --resume " + dir_.string() +
                                "` or choose another directory");
  }
  if (fs::exists(dir_ / "metrics.jsonl") || fs::exists(dir_ / "checkpoints")) {
    throw std::invalid_argument("--out " + dir_.string() + " holds another run's metrics or checkpoints; choose an empty directory");
  }
  fs::create_directories(dir_ / "logs");
}

void Runner::load_state() {
  records::TuneState s;
  try {
    s = records::read_tune_state(dir_.string());
  } catch (const records::RecordError& e) {
    throw std::invalid_argument(std::string("--resume: ") + e.what());
  }
  const TuneOptions stored = tune_options_from_json(s.options);
  // What the command line names must be the stored job's: a directory of
  // another model or data set is another job.
  if (!o_.job.model.empty() && o_.job.model != stored.job.model) {
    throw std::invalid_argument("--resume " + dir_.string() + ": that job trains " + stored.job.model + " on " +
                                stored.job.dataset + ", not " + o_.job.model +
                                "; resume it without --model or give another --out");
  }
  if (!o_.job.dataset.empty() && o_.job.dataset != stored.job.dataset) {
    throw std::invalid_argument("--resume " + dir_.string() + ": that job trains on " + stored.job.dataset + ", not " +
                                o_.job.dataset);
  }
  const std::string progress = o_.progress;
  const std::vector<std::string> roots = o_.job.data_roots;
  o_ = stored;
  // The roots the job is resumed under (the server's now) win over those it started under.
  if (!roots.empty()) o_.job.data_roots = roots;
  o_.resume = true;
  o_.job.out_dir = dir_.string();
  o_.progress = progress;
  phase_ = s.phase;
  ledger_ = JobLedger::resumed(s, unix_now());  // the time between the stop and now is not the job's
  held_.machine = s.machine;
  held_.config = s.config;
  try {
    auto report = records::read_tune_report(dir_.string());
    if (!report) throw records::RecordError("report.json is missing");
    report_ = std::move(*report);
  } catch (const records::RecordError& e) {
    throw std::invalid_argument("--resume " + dir_.string() + ": " + e.what());
  }
  if (phase_ == TunePhase::Done) return;  // kept as it finished: run() writes nothing
  report_.state = TuneOutcome::Running;
  fs::create_directories(dir_ / "logs");
}

void Runner::save_state() {
  records::TuneState s;
  s.options = to_json(o_);
  s.phase = phase_;
  ledger_.save(s, unix_now());
  s.machine = held_.machine;
  s.config = held_.config;
  records::write_tune_state(dir_.string(), s);
  write_report();
}

// ---- before training ------------------------------------------------------

void Runner::check_inputs() {
  // Every process started from here on opens its data files beneath these roots.
  common::pass_input_roots(o_.job.data_roots);
  data_dir();  // the first look; each child start looks again
  if (o_.job.resources != "local") read_input_file(o_, "--resources", o_.job.resources);
  BackendOptions bo;
  bo.tula_binary = engine_.tula_binary;
  bo.cluster_state = o_.job.cluster_state;
  backend_ = make_backend(o_.job.backend, bo);
  backend_->check_available();  // BackendError: Slurm not reachable, ...
}

std::string Runner::data_dir() const {
  return o_.job.data_dir.empty() ? "" : input_directory(o_, "--data-dir", o_.job.data_dir);
}

void Runner::profile() {
  const fs::path out = dir_ / "profile.json";
  if (!o_.pilot.profile_path.empty()) {
    const std::string text = read_input_file(o_, "--profile", o_.pilot.profile_path);
    auto given = parsed<predict::ProfileError>(o_.pilot.profile_path, text, predict::parse_profile);
    std::string why;
    if (given.model.name != o_.job.model) {
      throw std::invalid_argument("--profile " + o_.pilot.profile_path + " is a profile of " + given.model.name +
                                  ", not " + o_.job.model);
    }
    if (given.precision != o_.job.precision) {
      note("the profile " + o_.pilot.profile_path + " times " + given.precision + " steps, not " + o_.job.precision +
           "; profiling this machine at " + o_.job.precision + " instead");
    } else if (predict::same_hardware(given.hardware, predict::this_machine_cpu(), &why)) {
      common::write_file_atomically(out.string(), text);  // what was checked, not the path again
      progress_.say("profile: using " + o_.pilot.profile_path + " (measured on this hardware)");
      report_.notes.push_back("profile: reused " + o_.pilot.profile_path);
      return;
    } else {
      note("the profile " + o_.pilot.profile_path + " is from other hardware (" + why +
           "); profiling this machine instead");
    }
  }
  progress_.say("profiling " + o_.job.model + " on " + o_.job.dataset + " (quick profile, budget " +
                format_duration(o_.pilot.profile_budget_s) + ")");
  const double start = now_s();
  std::vector<std::string> args = {"--quick",    "--model",       o_.job.model,
                                   "--dataset",  o_.job.dataset,  "--out",
                                   out.string(), "--time-budget", exact_number(o_.pilot.profile_budget_s)};
  if (!o_.job.data_dir.empty()) args.insert(args.end(), {"--data-dir", data_dir()});
  if (o_.job.device != "cpu") args.insert(args.end(), {"--device", o_.job.device});
  if (o_.job.precision != "fp32") args.insert(args.end(), {"--precision", o_.job.precision});
  if (o_.job.synthetic_size > 0)
    args.insert(args.end(), {"--train-samples", option_text(option("synthetic_size"), o_)});
  if (o_.job.image_size > 0) append_option(args, o_, "image_size");
  if (!o_.job.augment) args.insert(args.end(), {"--no-augment"});  // the loader is timed as training will run it
  // The profile cache that `tula train --batch-size auto` shares; measured anew without it.
  args.insert(args.end(), {"--cache"});
  if (!o_.pilot.profile_cache) args.insert(args.end(), {"--reprofile"});
  const std::string log = (dir_ / "logs" / "profile.log").string();
  quick_profile(args, log);
  const double took = now_s() - start;
  ledger_.add_profile_s(took);
  progress_.say("profile in " + common::format_seconds(took) + ": " + common::last_line_of(log));
}

void Runner::quick_profile(const std::vector<std::string>& args, const std::string& log_path) {
  fs::create_directories(fs::path(log_path).parent_path());
  std::ofstream log(log_path, std::ios::trunc);
  if (!log) throw std::runtime_error("cannot write the profile's log " + log_path);
  const auto say = [&log](const std::string& line) { log << line << std::endl; };
  std::string command = "tula profile";
  for (const auto& arg : args) command += " " + arg;
  say("`" + command + "`, run by `tula tune` in its own process");
  try {
    engine_.profile_in_process(args, [&](const std::string& line) {
      say(line);
      if (g_stop_signal.load() != 0) throw std::runtime_error("interrupted while profiling");
    });
  } catch (const std::exception& e) {
    say(std::string("error: ") + e.what());
    if (g_stop_signal.load() != 0) throw;
    throw std::runtime_error(std::string("profiling failed: ") + e.what() + " (log: " + log_path + ")");
  }
}

void Runner::load_catalog() {
  profile_ = predict::load_profile((dir_ / "profile.json").string());
  validation_samples_ = apply_validation_split(profile_, o_);
  if (o_.job.resources == "local") {
    catalog_ = plan::local_catalog(profile_, o_.job.local_price_per_hour);
  } else {
    // CatalogError names the field.
    catalog_ = parsed<plan::CatalogError>(o_.job.resources, read_input_file(o_, "--resources", o_.job.resources),
                                          plan::parse_catalog);
    // Each type's speed against the device this job was profiled on, so that
    // every prediction the job makes (plan, watch, re-plan) scales alike.
    catalog_ = plan::resolve_speeds(catalog_, profile_);
  }
  for (const auto& text : backend_->fit_catalog(catalog_)) note(text);
  refit_.emplace(profile_, o_, epochs_prior());
  try {
    prior_predictor_.emplace(predict::Predictor::from_profile(profile_, refit_->predictor_options()));
  } catch (const predict::FitError& e) {
    throw std::runtime_error(std::string("the profile cannot be fitted: ") + e.what());
  }
}


std::string Runner::history_path() const {
  return o_.pilot.history_path.empty() ? default_history_path() : o_.pilot.history_path;
}

EpochsPrior Runner::epochs_prior() {
  if (!o_.pilot.history || !o_.to_target()) return stated_epochs_prior();
  try {
    const JobHistory history(history_path());
    auto prior = history.prior_for(history_setup(o_, model_digest(o_)));
    if (history.skipped_lines() > 0) {
      note_once(fmt::format("the job history {} has {} line(s) that do not parse; skipped", history.path(),
                            history.skipped_lines()));
    }
    if (prior.jobs > 0) {
      note_once(fmt::format("the prior: {:.3g} epochs at the reference batch {} (log sd {:.2f}) from {}", prior.epochs,
                            o_.training.reference_batch, prior.log_sd, prior.source));
    }
    return prior;
  } catch (const std::exception& e) {
    // Given by hand, an unreadable history is the user's to fix; the default
    // one only ever informs the prior.
    if (!o_.pilot.history_path.empty()) throw std::runtime_error(std::string("--history: ") + e.what());
    note_once(std::string("the job history is not read (") + e.what() + "); planning with the stated prior");
    return stated_epochs_prior();
  }
}

std::vector<CurveLaunch> Runner::curve_launches() const {
  const auto& steps = metrics_.steps();
  std::vector<CurveLaunch> out;
  for (const auto& l : metrics_.launches()) {
    // A launch that wrote no step yet starts after every step so far.
    const int64_t before = l.first_step_index < steps.size() ? steps[l.first_step_index].step - 1
                           : steps.empty()                   ? 0
                                                             : steps.back().step;
    out.push_back({l.workers, l.global_batch, before});
  }
  return out;
}

void Runner::record_history() {
  if (!o_.pilot.history || !o_.to_target() || !refit_) return;
  const double reference_epochs = refit_->reference_epochs_reached(refit_->view(metrics_));
  if (!(reference_epochs > 0)) return;
  HistoryEntry entry;
  entry.setup = history_setup(o_, model_digest(o_));
  entry.reference_epochs = reference_epochs;
  entry.epochs = epochs_done();
  entry.global_batch = held_.config.global_batch();
  entry.job = dir_.string();
  entry.finished = common::iso_utc(unix_now());
  entry.curve = history_curve(o_.training.seed, curve_launches());
  try {
    JobHistory(history_path()).append(entry);
  } catch (const std::exception& e) {
    note(std::string("this job's line was not added to the job history: ") + e.what());
  }
}

void Runner::start_at_given_config() {
  const auto manual = parse_manual_config(o_.watch.start_at);
  held_.config.workers_per_node = manual.workers;
  held_.config.batch_per_worker = manual.batch_per_worker;
  held_.config.accumulation_steps = manual.accumulation_steps;
  if (!o_.watch.start_on.empty()) place_given_config(parse_manual_placement(o_.watch.start_on));
  report_.chosen = placed(catalog_, held_.machine, held_.config);
  note(fmt::format("started at {} on {} x {} as --start-at asks{}", describe_config(held_.config), held_.config.nodes,
                   catalog_.machines.at(held_.machine).spec.name,
                   o_.watch.replan ? "; re-planned from its own measurements" : "; kept there (--no-replan)"));
  if (o_.watch.then_at.empty()) return;
  const auto move = given_move();  // refused now, not at the move, where it cannot run
  const auto to = placed(catalog_, move.machine, move.config);
  if (to == *report_.chosen) {
    throw std::invalid_argument("--then-at: " + describe_config(move.config) + " is where --start-at already runs");
  }
  note(fmt::format("then at {} on {} x {} once {:g} epochs are done, as --then-at asks", describe_config(move.config),
                   move.config.nodes, catalog_.machines.at(move.machine).spec.name, move.epochs));
}

size_t Runner::machine_for(const ManualPlacement& placement, int64_t workers_per_node, const std::string& option) const {
  const auto& machines = catalog_.machines;
  const auto it = std::find_if(machines.begin(), machines.end(),
                               [&](const auto& m) { return m.spec.name == placement.machine_type; });
  if (it == machines.end()) {
    std::string names;
    for (const auto& m : machines) names += (names.empty() ? "" : ", ") + m.spec.name;
    throw std::invalid_argument(option + ": no machine type '" + placement.machine_type + "' in " + o_.job.resources +
                                " (it has " + names + ")");
  }
  if (placement.nodes > it->max_nodes) {
    throw std::invalid_argument(
        fmt::format("{}: {} has {} nodes here, not {}", option, it->spec.name, it->max_nodes, placement.nodes));
  }
  if (workers_per_node > it->spec.max_workers_per_node) {
    throw std::invalid_argument(fmt::format("{}: {} workers per node, but {} takes {}", option, workers_per_node,
                                            it->spec.name, it->spec.max_workers_per_node));
  }
  return static_cast<size_t>(it - machines.begin());
}

void Runner::place_given_config(const ManualPlacement& placement) {
  held_.machine = machine_for(placement, held_.config.workers_per_node, "--start-on");
  held_.config.nodes = placement.nodes;
}

Runner::GivenMove Runner::given_move() const {
  const auto asked = parse_manual_move(o_.watch.then_at);
  GivenMove move;
  move.epochs = asked.epochs;
  move.config.workers_per_node = asked.config.workers;
  move.config.batch_per_worker = asked.config.batch_per_worker;
  move.config.accumulation_steps = asked.config.accumulation_steps;
  // Without --then-on the job stays on --start-at's nodes.
  const auto& start = *report_.chosen;
  ManualPlacement where{start.machine, start.config.nodes};
  if (!o_.watch.then_on.empty()) where = parse_manual_placement(o_.watch.then_on, "--then-on");
  move.machine = machine_for(where, move.config.workers_per_node, o_.watch.then_on.empty() ? "--then-at" : "--then-on");
  move.config.nodes = where.nodes;
  return move;
}

std::optional<SegmentEnd> Runner::given_move_due(const predict::Config& config) {
  if (o_.watch.then_at.empty() || !report_.chosen) return std::nullopt;
  const auto here = placed(catalog_, held_.machine, config);
  if (here != *report_.chosen) return std::nullopt;
  const auto move = given_move();
  if (epochs_done() < move.epochs) return std::nullopt;
  records::ReplanRecord entry;
  entry.t_s = now_s();
  entry.step = metrics_.last_step();
  entry.from = here;
  entry.to = placed(catalog_, move.machine, move.config);
  entry.reason = fmt::format("--then-at moves once {:g} epochs are done", move.epochs);
  entry.restart_cost_s = ledger_.restart_cost_s();
  entry.applied = true;
  record_replan(entry);
  progress_.say(fmt::format("--then-at at step {}: {} -> {}", entry.step, describe_config(config),
                            describe_config(move.config)));
  return SegmentEnd{SegmentEnd::Kind::Resize, entry.reason, move.config, move.machine};
}

size_t Runner::pilot_machine() const {
  if (!backend_->places_nodes()) return held_.machine;
  return pilot_machine_type(catalog_, pilot_layout(o_).workers, plan::parse_objective(o_.job.objective).kind)
      .value_or(held_.machine);
}

std::optional<plan::Candidate> Runner::pilot_layout_by_objective() const {
  if (!backend_->places_nodes() || o_.pilot.pilot_workers > 0 || o_.pilot.pilot_batch > 0) return std::nullopt;
  return pilot_at_reference_batch(profile_, catalog_, refit_->predictor_options(),
                                  plan::parse_objective(o_.job.objective), o_.training.reference_batch);
}

plan::Candidate Runner::pilot_on_type() const {
  plan::Candidate c;
  c.machine = static_cast<uint32_t>(pilot_machine());
  const auto& type = catalog_.machines.at(c.machine);
  const auto layout = pilot_layout(o_);
  c.config.workers_per_node = std::min<int64_t>(layout.workers, type.spec.max_workers_per_node);
  // On nodes that take fewer workers than the pilot's, more nodes.
  if (backend_->places_nodes()) {
    c.config.nodes =
        std::min(type.max_nodes, (layout.workers + c.config.workers_per_node - 1) / c.config.workers_per_node);
  }
  c.config.batch_per_worker = layout.batch_per_worker;
  return c;
}

void Runner::set_up_pilot() {
  const auto by_objective = pilot_layout_by_objective();
  const auto chosen = by_objective ? *by_objective : pilot_on_type();
  held_.machine = chosen.machine;
  const predict::Config& pilot = chosen.config;
  const std::string where =
      by_objective ? fmt::format(" ({} among the layouts at the reference batch, a step predicted at {:.3g} s)",
                                 plan::describe(plan::parse_objective(o_.job.objective)), chosen.iteration_s)
                   : "";
  const auto& machine = catalog_.machines.at(held_.machine).spec;
  pilot_steps_ = o_.replay.clock_times
                     ? pilot_length(o_.pilot.pilot_steps,
                                    evaluation_interval_steps(o_, profile_.data.train_samples, pilot.global_batch()))
                     : o_.pilot.pilot_steps;
  progress_.say(fmt::format("pilot: {} steps at {} on {}{} to measure the gradient noise scale and the step time",
                            pilot_steps_, describe_config(pilot), machine.name, where));
  held_.config = pilot;
}

bool Runner::pilot_done() const {
  const int64_t step = metrics_.last_step();
  if (step != pilot_steps_) return step > pilot_steps_;
  // An evaluation due at the pilot's last step calibrates the evaluation
  // model: wait for it. A later step means it is in (it is written first).
  const int64_t every = evaluation_interval_steps(o_, profile_.data.train_samples, held_.config.global_batch());
  if (pilot_steps_ % every != 0) return true;
  return !metrics_.evaluations().empty() && metrics_.evaluations().back().step >= pilot_steps_;
}

std::optional<SegmentEnd> Runner::plan_after_pilot() {
  const bool moves = initial_plan(/*pilot_running=*/true);
  move_phase(PhaseEvent::PlannedAfterPilot);
  save_state();
  if (!moves) return std::nullopt;
  return SegmentEnd{SegmentEnd::Kind::Resize, "the plan", held_.config, held_.machine};
}

// While the pilot's workers run, the plan's choice is a move like one at a
// watch (weigh_move): made where it pays for its restart by --min-saving,
// declined where not, and then the workers go on; a row of the report's
// re-plans either way. A deadline or budget takes the plan's choice, which is
// made to meet it. Returns whether the job moves off the pilot's placement.
bool Runner::initial_plan(bool pilot_running) {
  const auto c = clock();
  const auto r = replan_remainder(*refit_, metrics_, running_job(held_.config), catalog_,
                                  plan::parse_objective(o_.job.objective), c, node_choice());
  if (!r.fit_error.empty()) note("re-fit skipped: " + r.fit_error);
  if (!r.infeasible.empty()) throw predict::InfeasibleError("no configuration meets the objective: " + r.infeasible);
  if (!r.plan) throw std::runtime_error("planning failed: the models could not be fitted (see the notes)");
  const auto& plan = *r.plan;
  const auto& chosen = plan.chosen_candidate();
  bool moves = !pilot_running;
  if (pilot_running) {
    // Recorded either way, with the numbers it was weighed on.
    if (auto move =
            weigh_move(r, running_job(held_.config), c, *refit_, catalog_, *prior_predictor_, o_.watch.min_saving)) {
      moves = move->applied || plan.goal.objective.limited();
      std::string why = "the move pays by --min-saving " + percent(o_.watch.min_saving);
      if (!move->applied && moves) {
        why = plan.goal.objective.kind == plan::Objective::Kind::Deadline ? "a deadline" : "a budget";
        why += " takes the plan's choice, made to meet it";
      } else if (!moves) {
        why =
            "the move does not pay by --min-saving " + percent(o_.watch.min_saving) + ", so the pilot's workers go on";
      }
      move->applied = moves;
      move->reason = "the plan after the pilot: " + move->reason + "; " + why;
      record_replan(*move);
      progress_.say(move->reason);
    }
  }
  if (moves) {
    held_.machine = chosen.machine;
    held_.config = chosen.config;
  }
  const auto& machine = catalog_.machines.at(held_.machine).spec;
  double remaining = refit_->remaining_seconds(r.view, held_.config, r.planner->predictor_for(held_.machine), machine);
  // The restart is paid only where the pilot's workers stop for the move.
  const double restart = pilot_running && moves ? ledger_.restart_cost_s() : 0.0;
  double cost = cost_of(catalog_, held_.machine, held_.config, restart + remaining);
  std::string schedule_words;
  if (o_.to_target() && o_.watch.replan) {
    // A schedule moves by a resize, so --no-replan keeps one configuration.
    const auto schedule =
        plan_batch_schedule(r, *refit_, catalog_, c, o_.watch.min_saving, held_.machine, held_.config);
    schedule_words = schedule.explanation;
    if (schedule.segments.size() > 1) {
      remaining += schedule.time_s - schedule.fixed_time_s;
      cost += schedule.cost - schedule.fixed_cost;
      for (const auto& s : schedule.segments) {
        report_.schedule.push_back(
            {s.from_min_steps, s.to_min_steps, placed(catalog_, s.machine, s.config), s.b_noise, s.time_s, s.cost});
      }
    }
  }
  const double time = now_s() + restart + remaining;
  report_.plan = plan::to_json(plan);
  report_.chosen = placed(catalog_, held_.machine, held_.config);
  report_.predicted = records::ReportPrediction{
      time, ledger_.spent() + cost, "plan", r.view.b_noise, r.view.b_noise_source,
      r.view.b_noise_read > 0 ? std::optional<double>(r.view.b_noise_read) : std::nullopt};
  progress_.say("plan (" + plan::describe(plan.goal.objective) + "): " + describe_config(held_.config) + " on " +
                machine.name + ", predicted " + format_duration(time) + " in all");
  progress_.say(plan.notes.explanation);
  if (!schedule_words.empty()) progress_.say("schedule: " + schedule_words);
  return pilot_running && moves;
}

std::optional<SegmentEnd> Runner::planned_move(const JobView& view, const predict::Config& config) {
  const auto* due = schedule_move_due(report_.schedule, placed(catalog_, held_.machine, config), view);
  if (!due) return std::nullopt;
  const auto& next = *due;
  const double planned_share = next.from_min_steps / report_.schedule.back().to_min_steps;
  const auto it = std::find_if(catalog_.machines.begin(), catalog_.machines.end(),
                               [&](const plan::MachineType& m) { return m.spec.name == next.config.machine; });
  if (it == catalog_.machines.end()) return std::nullopt;
  records::ReplanRecord entry;
  entry.t_s = now_s();
  entry.step = view.steps_done;
  entry.from = placed(catalog_, held_.machine, config);
  entry.to = next.config;
  entry.reason = fmt::format("the planned batch schedule moves at {:.0f}% of the progress to the target, where "
                             "B_noise was planned to average {:.4g} over the rest",
                             100 * planned_share, next.b_noise);
  entry.restart_cost_s = ledger_.restart_cost_s();
  entry.applied = true;
  entry.numbers.b_noise = view.b_noise;
  record_replan(entry);
  progress_.say(fmt::format("schedule at step {}: {} -> {}", view.steps_done, describe_config(config),
                            describe_config(next.config.config)));
  return SegmentEnd{SegmentEnd::Kind::Resize, entry.reason, next.config.config,
                    static_cast<size_t>(it - catalog_.machines.begin())};
}

// ---- training -------------------------------------------------------------

std::vector<std::string> Runner::train_command(const predict::Config& config) const {
  const int64_t eval_every = evaluation_interval_steps(o_, profile_.data.train_samples, config.global_batch());
  const int64_t epochs = static_cast<int64_t>(std::ceil(o_.to_target() ? o_.watch.max_epochs : o_.job.epochs));
  std::vector<std::string> a = {engine_.tula_binary, "train"};
  // The job's own options that `tula train` shares (option_schema.cpp,
  // to_train), each under its flag, printed exactly.
  append_train_options(a, o_);
  a.insert(a.end(), {"--epochs", std::to_string(epochs), "--batch-size", std::to_string(config.batch_per_worker),
                     "--accumulation-steps", std::to_string(config.accumulation_steps), "--warmup-epochs",
                     exact_number(launch_warmup_epochs(o_, config.global_batch())),
                     // To a target the length is unknown: a constant rate after the warmup.
                     "--schedule", o_.to_target() ? "constant" : "cosine", "--checkpoint-dir",
                     (dir_ / "checkpoints").string(), "--resume", "--checkpoint-every",
                     std::to_string(o_.watch.watch_every_steps), "--metrics", (dir_ / "metrics.jsonl").string(),
                     "--progress", "none", "--eval-every", std::to_string(eval_every), "--tensor-stats-every", "0"});
  if (!o_.job.data_dir.empty()) a.insert(a.end(), {"--data-dir", data_dir()});  // resolved under the data roots
  // On the device the profile measured (--device auto resolved there); each
  // worker on its LOCAL_RANK's GPU, one per GPU as the plan gives them.
  if (profile_.hardware.device.kind == "cuda") a.insert(a.end(), {"--device", "cuda"});
  if (common::canonical_dataset_name(o_.job.dataset) == "imagefolder") append_option(a, o_, "eval_crop");
  // A lone worker measures the noise scale by its probe, at every step, so
  // the pilot has a sample a step and the re-fits read the job's own B_noise.
  // On one CPU core its two half batches cost small_cnn's step nothing and
  // LeNet-5's 3.8% (docs/notebook/round-31.md, "The oracle, round 31").
  if (config.workers() == 1) a.insert(a.end(), {"--noise-probe-every", "1"});
  if (validation_samples_ > 0) {
    // The same held-out samples in every launch (the split's seed is fixed), the test split read once at the end.
    a.insert(a.end(), {"--validation-size", std::to_string(validation_samples_), "--final-test"});
  }
  return a;
}

WorkerLaunch Runner::worker_launch(const predict::Config& config) {
  WorkerLaunch launch;
  launch.workers = static_cast<int>(config.workers());
  launch.nodes = static_cast<int>(config.nodes);
  const auto& spec = catalog_.machines.at(held_.machine).spec;
  launch.machine_type = spec.name;
  // One device per GPU worker; a CPU node's cores shared evenly by its workers.
  const int per_node = launch.workers / std::max(1, launch.nodes);
  if (spec.device_kind == "cpu") {
    launch.cpus_per_worker = static_cast<int>(std::max<int64_t>(1, spec.devices_per_node / std::max(1, per_node)));
  } else {
    launch.gpus_per_node = per_node;
  }
  launch.worker_command = train_command(config);
  launch.log_path = (dir_ / "logs" / ("launch-" + std::to_string(ledger_.count_launch()) + ".log")).string();
  launch.work_dir = dir_.string();
  launch.name = "tula-tune-" + o_.job.model;
  return launch;
}

SegmentEnd Runner::run_segment(const predict::Config& config, const std::string& label) {
  const WorkerLaunch launch = worker_launch(config);
  begin_segment(config, label);
  auto running = backend_->start(launch);
  launch_.segment.where = running->where();
  held_.queued = running->queued();
  const SegmentEnd end = run_launch(*running, *this);
  end_segment(end, launch.log_path);
  return end;
}

void Runner::begin_segment(const predict::Config& config, const std::string& label) {
  launch_ = CurrentLaunch{};
  launch_.requested_at = launch_.part_from = now_s();
  // Every record of the launches before this one (and, in a resumed job, of
  // the attempts before it) is read first: the new launch's restart, its first
  // step and its first watch count from where those left off.
  metrics_.poll();
  launch_.launches_before = metrics_.launches().size();
  held_.config = config;
  account();
  held_.training = true;
  auto& segment = launch_.segment;
  segment.start_t_s = launch_.requested_at;
  segment.config = placed(catalog_, held_.machine, config);
  segment.first_step = metrics_.last_step();
  segment.label = label;
  launch_.cadence = WatchCadence(o_.watch.watch_every_steps, o_.watch.watch_every_s);
  launch_.cadence.restart(segment.first_step, now_s());
}

void Runner::read_progress(const RunningLaunch& running) {
  metrics_.poll();
  account();  // the time since the last poll at what was held over it
  held_.queued = running.queued();
  if (!launch_.segment.queued_s && running.queued_s()) {
    launch_.segment.queued_s = running.queued_s();
    launch_.segment.queue_billed = catalog_.queue_wait_billed;
  }
  measure_start_up();
  show_progress(held_.config);
}

void Runner::measure_start_up() {
  // At this launch's first step. Its step numbers may lie below the segment's
  // first step: a launch after a failed one resumes from an older checkpoint.
  if (launch_.start_up_measured || metrics_.launches().size() <= launch_.launches_before) return;
  const auto& steps = metrics_.steps();
  const size_t first_index = metrics_.launches().back().first_step_index;
  if (first_index >= steps.size()) return;
  // From asking for workers to their first step, less that step's own time.
  const auto& first = steps[first_index];
  const double seconds = ledger_.measure_start_up(launch_.requested_at, ledger_.job_time(first.time) - first.iter_s,
                                                  launch_.segment.queued_s.value_or(0.0));
  // A restart's seconds and a queue's wait are phases of their own, not the pilot's or the training's.
  launch_.part_from += seconds;
  launch_.start_up_measured = true;
}

SegmentEnd Runner::interrupted(int signal) const {
  SegmentEnd end;
  end.kind = SegmentEnd::Kind::Interrupted;
  end.reason = std::string("interrupted by ") +
               (signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "a signal") +
               "; the checkpoint is kept: continue with `tula tune --resume " + dir_.string() + "`";
  return end;
}

std::optional<SegmentEnd> Runner::decide() {
  if (launch_.segment.label == "pilot") return decide_in_pilot();
  const double now = now_s();
  if (!launch_.cadence.due(metrics_.last_step(), now)) return std::nullopt;
  launch_.cadence.restart(metrics_.last_step(), now);
  if (auto decision = watch(held_.config)) return decision;
  save_state();
  return std::nullopt;
}

std::optional<SegmentEnd> Runner::decide_in_pilot() {
  if (!pilot_done()) return std::nullopt;
  if (auto move = plan_after_pilot()) return move;
  // The plan keeps the pilot's workers: the pilot's record ends here and the
  // training's begins, in the same launch.
  auto& segment = launch_.segment;
  const double planned_at = now_s();
  segment.end_t_s = planned_at;
  segment.last_step = metrics_.last_step();
  segment.exit = "planned here; the workers went on";
  report_.segments.push_back(segment);
  ledger_.add_pilot_s(planned_at - launch_.part_from);
  launch_.part_from = segment.start_t_s = planned_at;
  segment.first_step = metrics_.last_step();
  segment.label = "train";
  launch_.cadence.restart(metrics_.last_step(), now_s());
  return std::nullopt;
}

void Runner::end_segment(const SegmentEnd& end, const std::string& log_path) {
  metrics_.poll();
  if (metrics_.skipped_lines() > 0) {
    // The first such line stays the first: one note for the job.
    note_once("skipped metrics lines that are not records (a worker stopped mid-line?); the first: " +
              metrics_.first_problem());
  }
  account();
  held_.training = held_.queued = false;
  auto& segment = launch_.segment;
  const double ended_at = now_s();
  segment.end_t_s = ended_at;
  if (segment.label == "pilot") {
    ledger_.add_pilot_s(ended_at - launch_.part_from);
  } else {
    ledger_.add_train_s(ended_at - launch_.part_from);
  }
  segment.last_step = metrics_.last_step();
  segment.exit = exit_words(end);
  report_.segments.push_back(segment);
  progress_.end_bar();
  if (end.kind == SegmentEnd::Kind::Finished && metrics_.launches().size() == launch_.launches_before) {
    // Every `tula train` launch writes its start record first: workers that exit cleanly without one wrote their
    // metrics where this job does not read, and a verdict on the target would judge steps never seen.
    throw std::runtime_error(fmt::format("the workers of launch {} finished without writing a record to {}, the "
                                         "metrics this job reads (their log: {})",
                                         ledger_.launches(), (dir_ / "metrics.jsonl").string(), log_path));
  }
}

void Runner::show_progress(const predict::Config& config) {
  const double elapsed = now_s();
  std::string detail = fmt::format("step {} at B={}", metrics_.last_step(), config.global_batch());
  if (!metrics_.evaluations().empty()) {
    detail += fmt::format("{}{}", validation_samples_ > 0 ? ", val acc " : ", test acc ",
                          percent(metrics_.evaluations().back().test_accuracy));
  }
  if (!outlook_.words.empty()) detail += "; " + outlook_.words;
  // What the last watch predicted, less the time since.
  const double since = elapsed - outlook_.predicted_at;
  const auto left_now = [&](double s) { return std::max(0.0, s - since); };
  std::optional<double> remaining;
  if (outlook_.remaining_s) remaining = left_now(*outlook_.remaining_s);
  std::optional<records::SecondsRange> range;
  if (const auto& r = outlook_.remaining_range) {
    range = records::SecondsRange{left_now(r->low_s), left_now(r->high_s)};
  }
  const double fraction = remaining ? elapsed / std::max(1e-9, elapsed + *remaining) : 0.0;
  progress_.update(fraction, elapsed, remaining, range, detail);
}

void Runner::record_replan(const records::ReplanRecord& entry) {
  // A declined move to the same place is recorded once, not at every watch.
  const std::string to_key = to_json(entry.to).dump();
  if (!entry.applied && declined_to_ == to_key) return;
  declined_to_ = entry.applied ? "" : to_key;
  report_.replans.push_back(entry);
}

std::optional<SegmentEnd> Runner::replan_on_nodes_left(const std::string& failure) {
  if (!backend_->places_nodes()) return std::nullopt;
  plan::Catalog now = catalog_;
  std::vector<std::string> notes;
  try {
    notes = backend_->fit_catalog(now);
  } catch (const BackendError& e) {
    note(std::string("after the failure, no node to re-plan on: ") + e.what() + "; retrying where the job ran");
    return std::nullopt;
  }
  // The same types in the same order (indices into catalog_ stay), each
  // with the nodes it has now; a type with none keeps no node to plan on.
  bool fewer = false;
  for (auto& m : catalog_.machines) {
    const auto it = std::find_if(now.machines.begin(), now.machines.end(),
                                 [&](const plan::MachineType& n) { return n.spec.name == m.spec.name; });
    const int64_t left = it == now.machines.end() ? 0 : it->max_nodes;
    if (left < m.max_nodes) fewer = true;
    m.max_nodes = std::min(m.max_nodes, left);
  }
  if (!fewer || catalog_.machines.at(held_.machine).max_nodes >= held_.config.nodes) return std::nullopt;
  for (const auto& text : notes) note(text);
  const auto c = clock();
  const auto r = replan_remainder(*refit_, metrics_, running_job(held_.config), catalog_,
                                  plan::parse_objective(o_.job.objective), c, node_choice());
  if (!r.plan) {
    note("after the failure, the re-plan on the nodes left failed: " + (r.fit_error.empty() ? r.infeasible : r.fit_error));
    return std::nullopt;
  }
  const auto& chosen = r.plan->chosen_candidate();
  records::ReplanRecord entry;
  entry.t_s = now_s();
  entry.step = metrics_.last_step();
  entry.from = placed(catalog_, held_.machine, held_.config);
  entry.to = placed(catalog_, chosen.machine, chosen.config);
  entry.reason = fmt::format("the launch failed ({}) and {} of its {} nodes of {} are left up and idle: re-planned "
                             "on the nodes left, from the last checkpoint",
                             failure, catalog_.machines.at(held_.machine).max_nodes, held_.config.nodes,
                             catalog_.machines.at(held_.machine).spec.name);
  entry.restart_cost_s = ledger_.restart_cost_s();
  entry.applied = true;
  entry.numbers.b_noise = r.view.b_noise;
  record_replan(entry);
  progress_.say(fmt::format("node lost at step {}: {} -> {}", entry.step, describe_config(held_.config),
                            describe_config(chosen.config)));
  return SegmentEnd{SegmentEnd::Kind::Resize, entry.reason, chosen.config, chosen.machine};
}

RunningJob Runner::running_job(const predict::Config& config) const {
  RunningJob job;
  job.machine = held_.machine;
  job.config = config;
  job.train_samples = train_samples();
  return job;
}

std::optional<SegmentEnd> Runner::watch(const predict::Config& config) {
  const auto c = clock();
  RunningJob job = running_job(config);
  const auto r =
      replan_remainder(*refit_, metrics_, job, catalog_, plan::parse_objective(o_.job.objective), c, node_choice());
  if (!r.fit_error.empty()) note("re-fit skipped: " + r.fit_error);
  if (!r.planner) return given_move_due(config);
  if (!metrics_.evaluations().empty()) job.test_accuracy = metrics_.evaluations().back().test_accuracy;
  const auto d = decide_watch(r, job, c, *refit_, catalog_, *prior_predictor_, WatchPolicy::from(o_));
  outlook_ = {d.point.predicted_remaining_s, d.point.predicted_remaining_range, c.now_s, d.point.outlook};
  report_.timeline.push_back(d.point);
  if (d.give_up && !report_.give_up) {
    report_.give_up = d.give_up;
    if (!d.give_up->acted) {
      note(fmt::format("at step {} {}; --on-out-of-reach continue: training on", d.give_up->step, d.give_up->reason));
    }
  }
  if (d.replan) {
    record_replan(*d.replan);
  } else if (d.action == WatchAction::Continue) {
    declined_to_.clear();  // the plan agrees with where the job runs
  }
  switch (d.action) {
    case WatchAction::Continue:
      if (auto move = given_move_due(config)) return move;
      return planned_move(r.view, config);
    case WatchAction::Stop:
      return SegmentEnd{SegmentEnd::Kind::GoalOutOfReach, d.reason, {}, 0};
    case WatchAction::Resize:
      progress_.say(fmt::format("re-plan at step {}: {} -> {} ({})", r.view.steps_done, describe_config(config),
                                describe_config(d.next), d.reason));
      return SegmentEnd{SegmentEnd::Kind::Resize, d.reason, d.next, d.next_machine};
  }
  return std::nullopt;
}

TuneResult Runner::train() {
  if (phase_ != TunePhase::Profiled) move_phase(PhaseEvent::Training);  // Profiled: the pilot runs first
  save_state();
  for (;;) {
    const auto end = run_segment(held_.config, phase_ == TunePhase::Profiled ? "pilot" : "train");
    if (phase_ == TunePhase::Profiled && end.kind == SegmentEnd::Kind::Finished) {
      // The job ended within its pilot (a short one): planned still, for the record.
      initial_plan(/*pilot_running=*/false);
      move_phase(PhaseEvent::PlannedAfterPilot);
    }
    save_state();
    switch (end.kind) {
      case SegmentEnd::Kind::Resize:
        held_.machine = end.next_machine;
        held_.config = end.next;
        continue;
      case SegmentEnd::Kind::WorkerDied:
        if (const int retries = ledger_.count_retry(); retries > o_.watch.max_retries) {
          return finish(TuneOutcome::Failed,
                        fmt::format("a worker died {} times (max {} retries); the last: {}; the checkpoint is kept",
                                    retries, o_.watch.max_retries, end.reason),
                        1);
        }
        note(fmt::format("a worker died ({}); resuming from the last checkpoint, retry {} of {}", end.reason,
                         ledger_.retries(), o_.watch.max_retries));
        if (auto move = replan_on_nodes_left(end.reason)) {
          held_.machine = move->next_machine;
          held_.config = move->next;
        }
        continue;
      case SegmentEnd::Kind::Interrupted:
        return finish(TuneOutcome::Stopped, end.reason, 128 + g_stop_signal.load());
      case SegmentEnd::Kind::GoalOutOfReach:
        return finish(TuneOutcome::Stopped,
                      end.reason + "; the checkpoint is kept in " + (dir_ / "checkpoints").string(), 3);
      case SegmentEnd::Kind::Finished: {
        const auto best = metrics_.best_accuracy();
        if (o_.to_target()) {
          if (best && *best >= o_.job.target_accuracy) return finish(TuneOutcome::Succeeded, success_reason(), 0);
          return finish(TuneOutcome::Stopped,
                        fmt::format("the target {} was not reached within --max-epochs {} (best {}); the checkpoint "
                                    "is kept",
                                    percent(o_.job.target_accuracy),
                                    static_cast<int64_t>(std::ceil(o_.watch.max_epochs)), percent(best.value_or(0))),
                        3);
        }
        return finish(TuneOutcome::Succeeded, success_reason(), 0);
      }
    }
  }
}

// ---- the end --------------------------------------------------------------

void Runner::write_report() {
  const double total = now_s();
  auto& job = report_.job;
  job.model = o_.job.model;
  job.dataset = o_.job.dataset;
  job.objective = o_.job.objective;
  job.objective_text = plan::describe(plan::parse_objective(o_.job.objective));
  job.resources = o_.job.resources;
  job.backend = o_.job.backend;
  job.optimizer = o_.training.optimizer;
  job.target_accuracy = o_.to_target() ? std::optional<double>(o_.job.target_accuracy) : std::nullopt;
  job.epochs = o_.to_target() ? std::nullopt : std::optional<double>(o_.job.epochs);
  job.out_dir = dir_.string();
  job.started = common::iso_utc(ledger_.origin_unix());
  job.finished = records::is_final(report_.state) ? std::optional<std::string>(common::iso_utc(unix_now())) : std::nullopt;
  report_.phases = ledger_.phases(total);
  // The price of the type the job holds now: set once with the catalog, it
  // named the catalog's first type before the pilot or the plan placed the job.
  if (!catalog_.machines.empty()) {
    const auto& type = catalog_.machines.at(held_.machine).spec;
    report_.price = records::ReportPrice{
        catalog_.currency, type.price_per_hour,
        o_.job.resources == "local"
            ? "per node-hour of this machine (--price-per-hour)"
            : "per node-hour of " + type.name + ", the type the job runs on, from " + o_.job.resources};
  }
  report_.evaluations.clear();
  for (const auto& e : metrics_.evaluations()) {
    report_.evaluations.push_back({ledger_.job_time(e.time), e.step, e.samples / train_samples(), e.test_accuracy, e.test_loss});
  }
  records::ReportMeasured m;
  m.time_s = total;
  m.cost = ledger_.spent();
  m.final_accuracy = final_accuracy();
  m.evaluated_on = curve_split();
  m.best_accuracy = metrics_.best_accuracy();
  m.steps = metrics_.last_step();
  m.epochs = epochs_done();
  m.restarts = ledger_.restarts_measured();
  m.retries = ledger_.retries();
  report_.measured = m;
  records::write_tune_report(dir_.string(), report_);
  common::write_file_atomically((dir_ / "report.html").string(), render_report_html(report_));
}

std::optional<double> Runner::final_accuracy() const {
  if (validation_samples_ > 0) {
    if (metrics_.final_test()) return metrics_.final_test()->test_accuracy;
    return std::nullopt;
  }
  if (metrics_.evaluations().empty()) return std::nullopt;
  return metrics_.evaluations().back().test_accuracy;
}

std::string Runner::final_test_words() const {
  if (validation_samples_ == 0 || !final_accuracy()) return "";
  return "; final test accuracy " + percent(*final_accuracy());
}

TuneResult Runner::finish(TuneOutcome state, const std::string& reason, int exit_code) {
  account();
  report_.state = state;
  report_.reason = reason;
  report_.exit_code = exit_code;  // what `tula tune` exits with: a supervisor tells "out of reach" (3) from a stop
  // The remaining time was predicted to the goal: only a job that got there measures it.
  report_.remaining_error.clear();
  if (state == TuneOutcome::Succeeded) report_.remaining_error = remaining_time_errors(report_.timeline, now_s());
  if (state == TuneOutcome::Succeeded && phase_ != TunePhase::Done) record_history();
  if (state == TuneOutcome::Succeeded) move_phase(PhaseEvent::Succeeded);
  save_state();
  progress_.say(closing_summary(report_));
  return {state, reason, exit_code, (dir_ / "report.json").string(), (dir_ / "report.html").string()};
}

std::string Runner::success_reason() const {
  if (o_.to_target()) {
    return fmt::format("{} accuracy {} reached the target {} at step {}{}", curve_split(),
                       percent(metrics_.best_accuracy().value_or(0)), percent(o_.job.target_accuracy),
                       metrics_.last_step(), final_test_words());
  }
  return fmt::format("{} epochs done{}", static_cast<int64_t>(o_.job.epochs),
                     final_accuracy() ? ", final test accuracy " + percent(*final_accuracy()) : "");
}

TuneResult Runner::complete_finished_report() {
  try {
    // What the report counts with: the profile (samples an epoch), the
    // held-out split and the metrics. The price is the report's own.
    profile_ = predict::load_profile((dir_ / "profile.json").string());
    validation_samples_ = apply_validation_split(profile_, o_);
    metrics_.poll();
  } catch (const std::exception& e) {
    return finish(TuneOutcome::Failed, std::string("the finished job's records cannot be read: ") + e.what(), 1);
  }
  ledger_.start_billing(now_s());
  return finish(TuneOutcome::Succeeded, success_reason(), 0);
}

TuneResult Runner::already_finished() {
  progress_.say("the job in " + dir_.string() + " has finished; nothing to resume (its files are left as they are)");
  progress_.say(closing_summary(report_));
  return {report_.state, report_.reason, report_.exit_code.value_or(0), (dir_ / "report.json").string(),
          (dir_ / "report.html").string()};
}

TuneResult Runner::run() {
  open_directory();
  // Resuming a finished job would account its time and cost again and write
  // its report from metrics this process has not read.
  if (phase_ == TunePhase::Done) {
    return report_.state == TuneOutcome::Succeeded ? already_finished() : complete_finished_report();
  }
  try {
    check_inputs();
    ledger_.start_billing(now_s());
    if (phase_ == TunePhase::New) {
      if (const auto warning = common::math_library_warning(); !warning.empty()) note(warning);
      profile();
      move_phase(PhaseEvent::Profiled);
    }
    load_catalog();
    save_state();
    if (phase_ == TunePhase::Profiled) {
      if (!o_.watch.start_at.empty()) {
        start_at_given_config();
        move_phase(PhaseEvent::Planned);
      } else if (o_.pilot.pilot_steps > 0) {
        set_up_pilot();  // planned once its steps are in (train)
      } else {
        initial_plan(/*pilot_running=*/false);
        move_phase(PhaseEvent::Planned);
      }
      save_state();
    }
    return train();
  } catch (const BackendError& e) {
    return finish(TuneOutcome::Failed, e.what(), 1);
  } catch (const std::exception& e) {
    if (g_stop_signal.load() != 0) return finish(TuneOutcome::Stopped, e.what(), 128 + g_stop_signal.load());
    return finish(TuneOutcome::Failed, e.what(), 1);
  }
}

}  // namespace

void request_tune_stop(int signal) { g_stop_signal.store(signal); }

TuneResult run_tune(TuneOptions options, const std::string& tula_binary, QuickProfiler profile_in_process) {
  if (!options.resume) options.validate();
  if (options.job.out_dir.empty()) throw std::invalid_argument("--out is required");
  // The workers run in the job's directory and are handed paths under it (metrics, checkpoints): a relative --out
  // would put their files one level further down, where this process never looks.
  options.job.out_dir = fs::absolute(options.job.out_dir).lexically_normal().string();
  Runner runner(std::move(options), tula_binary, std::move(profile_in_process));
  return runner.run();
}

}  // namespace tula::tune
