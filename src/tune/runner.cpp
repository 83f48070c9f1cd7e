#include "tune/runner.hpp"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/atomic_file.hpp"
#include "plan/catalog.hpp"
#include "plan/local_catalog.hpp"
#include "plan/objective.hpp"
#include "plan/planner.hpp"
#include "plan/report.hpp"
#include "predict/error.hpp"
#include "predict/hardware_match.hpp"
#include "predict/profile.hpp"
#include "tune/backend.hpp"
#include "tune/child_process.hpp"
#include "tune/job_metrics.hpp"
#include "tune/refit.hpp"
#include "tune/report_html.hpp"
#include "tune/terminal.hpp"
#include "tune/tune_report.hpp"

namespace tula::tune {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

std::atomic<int> g_stop_signal{0};

constexpr const char* kStateFormat = "tula-tune-state";
constexpr int kStateVersion = 1;
constexpr int64_t kMinStepsPerWatch = 5;          // a timed watch needs this many new steps
constexpr auto kPoll = 300ms;                    // between reads of the metrics while a launch runs
constexpr auto kStopGrace = std::chrono::seconds(120);  // a stopped launch's checkpoint and exit

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string iso_time(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

json config_json(const plan::Catalog& catalog, size_t machine, const predict::Config& c) {
  return {{"machine", catalog.machines.at(machine).spec.name},
          {"nodes", c.nodes},
          {"workers_per_node", c.workers_per_node},
          {"batch_per_worker", c.batch_per_worker},
          {"accumulation_steps", c.accumulation_steps},
          {"global_batch", c.global_batch()}};
}

std::string describe_config(const predict::Config& c) {
  std::ostringstream s;
  s << c.workers() << " worker" << (c.workers() == 1 ? "" : "s") << " x " << c.batch_per_worker;
  if (c.accumulation_steps > 1) s << " x " << c.accumulation_steps << " accumulated";
  s << " (global batch " << c.global_batch() << ")";
  return s.str();
}

bool same_config(const predict::Config& a, const predict::Config& b) {
  return a.nodes == b.nodes && a.workers_per_node == b.workers_per_node && a.batch_per_worker == b.batch_per_worker &&
         a.accumulation_steps == b.accumulation_steps;
}

std::string percent(double fraction) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << 100 * fraction << "%";
  return s.str();
}

// How a launch of the workers ended, as the runner sees it.
struct SegmentEnd {
  enum class Kind { Finished, Resize, GoalOutOfReach, WorkerDied, Interrupted } kind = Kind::Finished;
  std::string reason;
  predict::Config next;  // Resize
  size_t next_machine = 0;
};

class Runner {
 public:
  Runner(TuneOptions options, std::string tula_binary)
      : o_(std::move(options)), tula_(std::move(tula_binary)), dir_(o_.out_dir), progress_(o_.progress),
        metrics_((fs::path(o_.out_dir) / "metrics.jsonl").string()), restart_cost_s_(o_.restart_cost_s) {}

  TuneOutcome run();

 private:
  // Set-up and the phases before training.
  void open_directory();
  void load_state();
  void save_state();
  void check_inputs();
  void profile();
  void load_catalog();
  void pilot();
  void initial_plan();
  TuneOutcome train();

  // One launch of the workers, watched until it ends or is stopped.
  SegmentEnd run_segment(const predict::Config& config, int64_t max_steps, const std::string& label);
  std::vector<std::string> train_command(const predict::Config& config, int64_t max_steps) const;
  SegmentEnd stop_launch(RunningLaunch& launch, SegmentEnd end);
  // Every K steps: measured against predicted, re-fit, stop or resize.
  std::optional<SegmentEnd> watch(const predict::Config& config);

  // Plans the remaining work; nullopt when the fit fails (said in the notes).
  struct Replan {
    std::optional<plan::Plan> plan;
    std::optional<plan::Planner> planner;  // its predictors are the re-fitted models, one per machine type
    JobView view;
    std::string infeasible;  // the deadline or budget cannot be met any more: why
  };
  Replan replan(const predict::Config& running);
  plan::Objective remaining_objective(double fraction) const;

  double now_s() const { return job_time(unix_now()); }
  double job_time(double unix_seconds) const;
  void account(double now);  // adds the cost since the last call
  void note(const std::string& text);
  void show_progress(const predict::Config& config);
  TuneOutcome finish(const std::string& state, const std::string& reason, int exit_code);
  void write_report();

  TuneOptions o_;
  std::string tula_;
  fs::path dir_;
  TuneProgress progress_;
  JobMetrics metrics_;
  std::unique_ptr<Backend> backend_;

  json report_ = json::object();
  std::string phase_ = "new";  // new, profiled, piloted, training, done
  double origin_unix_ = 0;     // job time 0
  json pauses_ = json::array();  // [unix time resumed, seconds paused] of earlier stops
  double profile_s_ = 0, pilot_s_ = 0, train_s_ = 0, restart_s_ = 0, spent_ = 0;
  double accounted_at_ = -1;
  double restart_cost_s_;
  int restarts_measured_ = 0;
  int retries_ = 0, launches_ = 0;

  predict::Profile profile_;
  plan::Catalog catalog_;
  std::optional<Refit> refit_;
  std::optional<predict::Predictor> prior_predictor_;  // the plan's models, before any re-fit
  size_t machine_ = 0;
  predict::Config config_;
  bool training_ = false;  // a launch of the job's training is running (its cost accrues)
  std::optional<double> last_remaining_s_;
  double remaining_at_ = 0;  // job time when last_remaining_s_ was predicted
  std::string last_detail_;
  std::string declined_to_;  // the configuration a re-plan last declined, so it is recorded once
};

// ---- time and money -------------------------------------------------------

double Runner::job_time(double unix_seconds) const {
  double t = unix_seconds - origin_unix_;
  for (const auto& p : pauses_) {
    if (unix_seconds >= p[0].get<double>()) t -= p[1].get<double>();
  }
  return t;
}

void Runner::account(double now) {
  if (accounted_at_ >= 0 && now > accounted_at_) {
    const auto& m = catalog_.machines.empty() ? nullptr : &catalog_.machines[machine_];
    const double price = m ? m->spec.price_per_hour : o_.local_price_per_hour;
    const double nodes = training_ ? static_cast<double>(config_.nodes) : 1.0;
    spent_ += (now - accounted_at_) / 3600.0 * nodes * price;
  }
  accounted_at_ = now;
}

void Runner::note(const std::string& text) {
  report_["notes"].push_back(text);
  progress_.say("note: " + text);
}

// ---- state ----------------------------------------------------------------

void Runner::open_directory() {
  const fs::path state = dir_ / "tune.json";
  if (o_.resume) {
    if (!fs::exists(state)) {
      throw std::invalid_argument("--resume " + dir_.string() + ": no tune job there (no tune.json)");
    }
    load_state();
    return;
  }
  if (fs::exists(state)) {
    throw std::invalid_argument("--out " + dir_.string() +
                                " already holds a tune job; continue it with `tula tune --resume " + dir_.string() +
                                "` or choose another directory");
  }
  if (fs::exists(dir_ / "metrics.jsonl") || fs::exists(dir_ / "checkpoints")) {
    throw std::invalid_argument("--out " + dir_.string() + " holds another run's metrics or checkpoints; choose an empty directory");
  }
  fs::create_directories(dir_ / "logs");
  origin_unix_ = unix_now();
  report_ = {{"format", "tula-tune-report"}, {"version", 1}, {"state", "running"}, {"reason", ""},
             {"plan", nullptr}, {"chosen", nullptr}, {"predicted", nullptr}, {"measured", nullptr},
             {"timeline", json::array()}, {"evaluations", json::array()}, {"replans", json::array()},
             {"segments", json::array()}, {"remaining_error", json::array()}, {"notes", json::array()}};
}

void Runner::load_state() {
  std::ifstream in(dir_ / "tune.json");
  json s;
  try {
    s = json::parse(in);
  } catch (const json::exception& e) {
    throw std::invalid_argument("--resume " + dir_.string() + ": tune.json is not readable JSON (" + e.what() + ")");
  }
  if (s.value("format", "") != kStateFormat || s.value("version", 0) != kStateVersion) {
    throw std::invalid_argument("--resume " + dir_.string() + ": tune.json is not a tula tune state (version " +
                                std::to_string(kStateVersion) + ")");
  }
  const TuneOptions stored = tune_options_from_json(s.at("options"));
  // What the command line names must be the stored job's: a directory of
  // another model or data set is another job.
  if (!o_.model.empty() && o_.model != stored.model) {
    throw std::invalid_argument("--resume " + dir_.string() + ": that job trains " + stored.model + " on " +
                                stored.dataset + ", not " + o_.model + "; resume it without --model or give another --out");
  }
  if (!o_.dataset.empty() && o_.dataset != stored.dataset) {
    throw std::invalid_argument("--resume " + dir_.string() + ": that job trains on " + stored.dataset + ", not " +
                                o_.dataset);
  }
  const std::string progress = o_.progress;
  o_ = stored;
  o_.resume = true;
  o_.out_dir = dir_.string();
  o_.progress = progress;
  phase_ = s.at("phase").get<std::string>();
  origin_unix_ = s.at("origin_unix").get<double>();
  pauses_ = s.value("pauses", json::array());
  const double elapsed = s.at("elapsed_s").get<double>();
  // Time between the stop and now is not the job's.
  const double now = unix_now();
  pauses_.push_back({now, job_time(now) - elapsed});
  profile_s_ = s.value("profile_s", 0.0);
  pilot_s_ = s.value("pilot_s", 0.0);
  train_s_ = s.value("train_s", 0.0);
  restart_s_ = s.value("restart_s", 0.0);
  spent_ = s.value("spent", 0.0);
  retries_ = s.value("retries", 0);
  launches_ = s.value("launches", 0);
  restart_cost_s_ = s.value("restart_cost_s", o_.restart_cost_s);
  machine_ = s.value("machine", size_t{0});
  if (s.contains("config")) {
    const auto& c = s["config"];
    config_.nodes = c.at("nodes");
    config_.workers_per_node = c.at("workers_per_node");
    config_.batch_per_worker = c.at("batch_per_worker");
    config_.accumulation_steps = c.at("accumulation_steps");
  }
  std::ifstream report_in(dir_ / "report.json");
  report_ = json::parse(report_in, nullptr, false);
  if (report_.is_discarded()) throw std::invalid_argument("--resume " + dir_.string() + ": report.json is unreadable");
  report_["state"] = "running";
  fs::create_directories(dir_ / "logs");
}

void Runner::save_state() {
  const json state = {{"format", kStateFormat},
                      {"version", kStateVersion},
                      {"options", to_json(o_)},
                      {"phase", phase_},
                      {"origin_unix", origin_unix_},
                      {"pauses", pauses_},
                      {"elapsed_s", now_s()},
                      {"profile_s", profile_s_},
                      {"pilot_s", pilot_s_},
                      {"train_s", train_s_},
                      {"restart_s", restart_s_},
                      {"spent", spent_},
                      {"retries", retries_},
                      {"launches", launches_},
                      {"restart_cost_s", restart_cost_s_},
                      {"machine", machine_},
                      {"config",
                       {{"nodes", config_.nodes},
                        {"workers_per_node", config_.workers_per_node},
                        {"batch_per_worker", config_.batch_per_worker},
                        {"accumulation_steps", config_.accumulation_steps}}}};
  common::write_file_atomically((dir_ / "tune.json").string(), state.dump(2) + "\n");
  write_report();
}

// ---- before training ------------------------------------------------------

void Runner::check_inputs() {
  if (!o_.data_dir.empty() && !fs::is_directory(o_.data_dir)) {
    throw std::invalid_argument("--data-dir " + o_.data_dir + ": no such directory");
  }
  BackendOptions bo;
  bo.tula_binary = tula_;
  backend_ = make_backend(o_.backend, bo);
  backend_->check_available();  // BackendError: Slurm not reachable, ...
}

void Runner::profile() {
  const fs::path out = dir_ / "profile.json";
  if (!o_.profile_path.empty()) {
    auto given = predict::load_profile(o_.profile_path);
    std::string why;
    if (given.model.name != o_.model) {
      throw std::invalid_argument("--profile " + o_.profile_path + " is a profile of " + given.model.name + ", not " +
                                  o_.model);
    }
    if (predict::same_hardware(given.hardware, predict::this_machine_cpu(), &why)) {
      fs::copy_file(o_.profile_path, out, fs::copy_options::overwrite_existing);
      progress_.say("profile: using " + o_.profile_path + " (measured on this hardware)");
      report_["notes"].push_back("profile: reused " + o_.profile_path);
      return;
    }
    note("the profile " + o_.profile_path + " is from other hardware (" + why + "); profiling this machine instead");
  }
  progress_.say("profiling " + o_.model + " on " + o_.dataset + " (quick profile, budget " +
                format_duration(o_.profile_budget_s) + ")");
  const double start = now_s();
  std::vector<std::string> argv = {tula_, "profile", "--quick", "--model", o_.model, "--dataset", o_.dataset,
                                   "--out", out.string(), "--time-budget", std::to_string(o_.profile_budget_s)};
  if (!o_.data_dir.empty()) argv.insert(argv.end(), {"--data-dir", o_.data_dir});
  if (o_.synthetic_size > 0) argv.insert(argv.end(), {"--train-samples", std::to_string(o_.synthetic_size)});
  const std::string log = (dir_ / "logs" / "profile.log").string();
  ChildProcess child(argv, log, dir_.string());
  std::optional<int> status;
  const double limit = std::max(600.0, 5 * o_.profile_budget_s);
  while (!(status = child.wait_for(kPoll))) {
    if (g_stop_signal.load() != 0) {
      child.signal(SIGTERM);
      child.wait_for(30s);
      throw std::runtime_error("interrupted while profiling");
    }
    if (now_s() - start > limit) {
      child.signal(SIGKILL);
      child.wait_for(30s);
      throw std::runtime_error("the profile took more than " + format_duration(limit) + "; see " + log);
    }
  }
  if (*status != 0) {
    throw std::runtime_error("profiling failed (exit status " + std::to_string(*status) + "): " + last_line_of(log) +
                             " (log: " + log + ")");
  }
  profile_s_ = now_s() - start;
  progress_.say("profiled in " + format_duration(profile_s_) + " (" + out.string() + ")");
}

void Runner::load_catalog() {
  profile_ = predict::load_profile((dir_ / "profile.json").string());
  if (o_.resources == "local") {
    catalog_ = plan::local_catalog(profile_, o_.local_price_per_hour);
  } else {
    catalog_ = plan::load_catalog(o_.resources);  // CatalogError names the field
  }
  refit_.emplace(profile_, o_);
  report_["price"] = {{"currency", catalog_.currency},
                      {"per_hour", catalog_.machines.at(machine_).spec.price_per_hour},
                      {"basis", o_.resources == "local" ? "per node-hour of this machine (--price-per-hour)"
                                                        : "per node-hour of the machine type, from " + o_.resources}};
  try {
    prior_predictor_.emplace(predict::Predictor::from_profile(profile_, refit_->predictor_options()));
  } catch (const predict::FitError& e) {
    throw std::runtime_error(std::string("the profile cannot be fitted: ") + e.what());
  }
}

plan::Objective Runner::remaining_objective(double fraction) const {
  auto objective = plan::parse_objective(o_.objective);
  fraction = std::max(fraction, 1e-6);
  if (objective.kind == plan::Objective::Kind::Deadline) {
    objective.limit = (objective.limit - now_s() - restart_cost_s_) / fraction;
  } else if (objective.kind == plan::Objective::Kind::Budget) {
    objective.limit = (objective.limit - spent_) / fraction;
  }
  return objective;
}

Runner::Replan Runner::replan(const predict::Config& running) {
  Replan r;
  r.view = refit_->view(metrics_);
  const predict::Profile p = refit_->profile_with(r.view, running);
  try {
    plan::PlannerOptions po;
    po.predictor = refit_->predictor_options();
    po.space.nodes = {1};  // both backends here run one node
    const auto& planner = r.planner.emplace(p, catalog_, po);
    const double fraction = refit_->remaining_fraction(r.view);
    const auto objective = remaining_objective(fraction);
    if ((objective.kind == plan::Objective::Kind::Deadline || objective.kind == plan::Objective::Kind::Budget) &&
        objective.limit <= 0) {
      r.infeasible = objective.kind == plan::Objective::Kind::Deadline ? "the deadline has passed"
                                                                         : "the budget is spent";
      return r;
    }
    r.plan = planner.plan(objective);
  } catch (const predict::InfeasibleError& e) {
    r.infeasible = e.what();
  } catch (const predict::FitError& e) {
    note(std::string("re-fit skipped: ") + e.what());
  }
  return r;
}

void Runner::pilot() {
  const auto& machine = catalog_.machines.at(machine_).spec;
  predict::Config pilot;
  pilot.workers_per_node = std::min<int64_t>(o_.pilot_workers, machine.max_workers_per_node);
  pilot.batch_per_worker = o_.pilot_batch;
  progress_.say("pilot: " + std::to_string(o_.pilot_steps) + " steps at " + describe_config(pilot) +
                " to measure the gradient noise scale and the step time");
  const double start = now_s();
  config_ = pilot;
  const auto end = run_segment(pilot, o_.pilot_steps, "pilot");
  pilot_s_ = now_s() - start;
  if (end.kind == SegmentEnd::Kind::Interrupted) throw std::runtime_error(end.reason);
  if (end.kind != SegmentEnd::Kind::Finished) throw std::runtime_error("the pilot run failed: " + end.reason);
}

void Runner::initial_plan() {
  const auto r = replan(config_);
  if (!r.infeasible.empty()) throw predict::InfeasibleError("no configuration meets the objective: " + r.infeasible);
  if (!r.plan) throw std::runtime_error("planning failed: the models could not be fitted (see the notes)");
  const auto& plan = *r.plan;
  const auto& chosen = plan.chosen_candidate();
  machine_ = chosen.machine;
  config_ = chosen.config;
  const auto& machine = catalog_.machines.at(machine_).spec;
  const double remaining = refit_->remaining_seconds(r.view, config_, r.planner->predictor_for(machine_), machine);
  const double restart = o_.pilot_steps > 0 ? restart_cost_s_ : 0.0;  // the pilot's workers stop, the job's start
  const double time = now_s() + restart + remaining;
  report_["plan"] = plan::to_json(plan);
  report_["chosen"] = config_json(catalog_, machine_, config_);
  report_["predicted"] = {{"time_s", time},
                          {"cost", spent_ + (restart + remaining) / 3600.0 * static_cast<double>(config_.nodes) *
                                                machine.price_per_hour},
                          {"at", "plan"},
                          {"b_noise", r.view.b_noise},
                          {"b_noise_source", r.view.b_noise_source}};
  progress_.say("plan (" + plan::describe(plan.objective) + "): " + describe_config(config_) + " on " + machine.name +
                ", predicted " + format_duration(time) + " in all");
  progress_.say(plan.explanation);
}

// ---- training -------------------------------------------------------------

std::vector<std::string> Runner::train_command(const predict::Config& config, int64_t max_steps) const {
  const int64_t eval_every = evaluation_interval_steps(o_, profile_.data.train_samples, config.global_batch());
  const int64_t epochs = static_cast<int64_t>(std::ceil(o_.to_target() ? o_.max_epochs : o_.epochs));
  std::vector<std::string> a = {tula_, "train", "--model", o_.model, "--dataset", o_.dataset,
                                "--epochs", std::to_string(epochs),
                                "--batch-size", std::to_string(config.batch_per_worker),
                                "--accumulation-steps", std::to_string(config.accumulation_steps),
                                "--optimizer", o_.optimizer, "--lr", std::to_string(o_.lr),
                                "--reference-batch", std::to_string(o_.reference_batch),
                                "--lr-scaling", o_.lr_scaling, "--momentum", std::to_string(o_.momentum),
                                "--weight-decay", std::to_string(o_.weight_decay),
                                "--warmup-epochs", std::to_string(o_.warmup_epochs),
                                // To a target the length is unknown: a constant rate after the warmup.
                                "--schedule", o_.to_target() ? "constant" : "cosine",
                                "--seed", std::to_string(o_.seed),
                                "--checkpoint-dir", (dir_ / "checkpoints").string(), "--resume",
                                "--checkpoint-every", std::to_string(max_steps > 0 ? max_steps : o_.watch_every_steps),
                                "--metrics", (dir_ / "metrics.jsonl").string(), "--progress", "none",
                                "--eval-every", std::to_string(eval_every), "--tensor-stats-every", "0"};
  if (!o_.data_dir.empty()) a.insert(a.end(), {"--data-dir", o_.data_dir});
  if (o_.synthetic_size > 0) a.insert(a.end(), {"--synthetic-size", std::to_string(o_.synthetic_size)});
  if (o_.to_target()) a.insert(a.end(), {"--target-accuracy", std::to_string(o_.target_accuracy)});
  if (max_steps > 0) a.insert(a.end(), {"--max-steps", std::to_string(max_steps)});
  return a;
}

SegmentEnd Runner::stop_launch(RunningLaunch& launch, SegmentEnd end) {
  launch.request_stop();
  if (!launch.wait_for(kStopGrace)) {
    note("the workers did not stop within " + format_duration(std::chrono::duration<double>(kStopGrace).count()) +
         " of SIGTERM; killed (the last periodic checkpoint is kept)");
    launch.kill();
    launch.wait_for(30s);
  }
  return end;
}

SegmentEnd Runner::run_segment(const predict::Config& config, int64_t max_steps, const std::string& label) {
  WorkerLaunch launch;
  launch.workers = static_cast<int>(config.workers());
  launch.worker_command = train_command(config, max_steps);
  launch.log_path = (dir_ / "logs" / ("launch-" + std::to_string(++launches_) + ".log")).string();
  launch.work_dir = dir_.string();
  launch.name = "tula-tune-" + o_.model;
  const double requested_at = now_s();
  const int64_t first_step = metrics_.last_step();
  const size_t launches_before = metrics_.launches().size();
  config_ = config;
  training_ = true;
  account(now_s());
  auto running = backend_->start(launch);
  json segment = {{"start_t_s", requested_at}, {"config", config_json(catalog_, machine_, config)},
                  {"first_step", first_step}, {"label", label}, {"where", running->where()}};
  int64_t watched_at = first_step;
  double watched_time = now_s();
  bool restart_measured = false;
  SegmentEnd end;
  for (;;) {
    const auto exit = running->wait_for(kPoll);
    metrics_.poll();
    const double now = now_s();
    account(now);
    if (!restart_measured && metrics_.launches().size() > launches_before && metrics_.last_step() > first_step) {
      // From asking for workers to their first step, less that step's own time.
      const auto& first = metrics_.steps()[metrics_.launches().back().first_step_index];
      const double cost = std::max(0.0, job_time(first.time) - first.iter_s - requested_at);
      ++restarts_measured_;
      restart_s_ += cost;
      restart_cost_s_ = cost;  // the latest restart on this machine is the best guess of the next
      restart_measured = true;
    }
    show_progress(config);
    if (exit) {
      if (exit->exit_code == 0) {
        end.kind = SegmentEnd::Kind::Finished;
        end.reason = "the workers finished";
      } else {
        end.kind = SegmentEnd::Kind::WorkerDied;
        end.reason = running->where() + ": " + exit->description;
      }
      break;
    }
    if (const int sig = g_stop_signal.load(); sig != 0) {
      end.kind = SegmentEnd::Kind::Interrupted;
      end.reason = std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal") +
                   "; the checkpoint is kept: continue with `tula tune --resume " + dir_.string() + "`";
      end = stop_launch(*running, end);
      break;
    }
    const int64_t new_steps = metrics_.last_step() - watched_at;
    if (max_steps == 0 && (new_steps >= o_.watch_every_steps ||
                           (new_steps >= kMinStepsPerWatch && now - watched_time >= o_.watch_every_s))) {
      watched_at = metrics_.last_step();
      watched_time = now;
      if (auto decision = watch(config)) {
        end = stop_launch(*running, *decision);
        break;
      }
      save_state();
    }
  }
  metrics_.poll();
  training_ = false;
  account(now_s());
  train_s_ += label == "pilot" ? 0.0 : now_s() - requested_at;
  segment["end_t_s"] = now_s();
  segment["last_step"] = metrics_.last_step();
  segment["exit"] = end.kind == SegmentEnd::Kind::Finished ? (label == "pilot" ? "pilot done" : "finished")
                    : end.kind == SegmentEnd::Kind::Resize ? "stopped for resize"
                    : end.kind == SegmentEnd::Kind::GoalOutOfReach ? "stopped: goal out of reach"
                    : end.kind == SegmentEnd::Kind::Interrupted ? "interrupted"
                                                                : "worker died: " + end.reason;
  report_["segments"].push_back(segment);
  progress_.end_bar();
  return end;
}

void Runner::show_progress(const predict::Config& config) {
  const double elapsed = now_s();
  std::ostringstream detail;
  detail << "step " << metrics_.last_step() << " at B=" << config.global_batch();
  if (!metrics_.evaluations().empty()) detail << ", test acc " << percent(metrics_.evaluations().back().test_accuracy);
  std::optional<double> remaining;
  if (last_remaining_s_) remaining = std::max(0.0, *last_remaining_s_ - (elapsed - remaining_at_));
  const double fraction = remaining ? elapsed / std::max(1e-9, elapsed + *remaining) : 0.0;
  progress_.update(fraction, elapsed, remaining, detail.str());
}

std::optional<SegmentEnd> Runner::watch(const predict::Config& config) {
  const double now = now_s();
  auto r = replan(config);
  const auto& view = r.view;
  const auto& machine = catalog_.machines.at(machine_).spec;
  if (!r.planner) return std::nullopt;
  const auto& predictor = r.planner->predictor_for(machine_);
  const double remaining = refit_->remaining_seconds(view, config, predictor, machine);
  last_remaining_s_ = remaining;
  remaining_at_ = now;  // the time the remaining estimate was made
  const double train_samples = static_cast<double>(std::max<int64_t>(1, profile_.data.train_samples));
  json point = {{"t_s", now},
                {"step", view.steps_done},
                {"epoch", view.samples_done / train_samples},
                {"global_batch", config.global_batch()},
                {"workers", config.workers()},
                {"iteration_s", view.iteration_s ? json(*view.iteration_s) : json(nullptr)},
                {"iteration_s_predicted", prior_predictor_->point(config, machine).iteration_s},
                {"b_noise", view.b_noise > 0 ? json(view.b_noise) : json(nullptr)},
                {"predicted_total_s", now + remaining},
                {"predicted_remaining_s", remaining},
                {"cost_so_far", spent_},
                {"test_accuracy", metrics_.evaluations().empty() ? json(nullptr)
                                                                 : json(metrics_.evaluations().back().test_accuracy)},
                {"target_min_steps", o_.to_target() ? json(view.target_min_steps) : json(nullptr)},
                {"forecast", view.forecast.note}};
  report_["timeline"].push_back(point);

  // Out of reach?
  if (o_.to_target()) {
    if (view.forecast.plateau) {
      return SegmentEnd{SegmentEnd::Kind::GoalOutOfReach,
                        "the test accuracy stopped improving at " + percent(view.best_accuracy.value_or(0)) +
                            ", short of the target " + percent(o_.target_accuracy) + " (" + view.forecast.note + ")",
                        {}, 0};
    }
    const double epochs_needed =
        view.samples_done / train_samples +
        refit_->remaining_steps(view, config) * static_cast<double>(config.global_batch()) / train_samples;
    if (view.target_from_forecast && view.forecast.points >= 4 && epochs_needed > o_.max_epochs) {
      std::ostringstream why;
      why.precision(3);
      why << "the target " << percent(o_.target_accuracy) << " is forecast at " << epochs_needed
          << " epochs, beyond --max-epochs " << o_.max_epochs << " (" << view.forecast.note << ")";
      return SegmentEnd{SegmentEnd::Kind::GoalOutOfReach, why.str(), {}, 0};
    }
  }
  if (!r.infeasible.empty()) {
    return SegmentEnd{SegmentEnd::Kind::GoalOutOfReach,
                      plan::describe(plan::parse_objective(o_.objective)) + " can no longer be met: " + r.infeasible,
                      {}, 0};
  }
  if (!o_.replan || !r.plan) return std::nullopt;

  const auto& best = r.plan->chosen_candidate();
  if (best.machine == machine_ && same_config(best.config, config)) {
    declined_to_.clear();
    return std::nullopt;
  }
  const auto& next_machine = catalog_.machines.at(best.machine).spec;
  const double remaining_next =
      refit_->remaining_seconds(view, best.config, r.planner->predictor_for(best.machine), next_machine);
  const double cost_now = remaining / 3600.0 * static_cast<double>(config.nodes) * machine.price_per_hour;
  const double cost_next = (remaining_next + restart_cost_s_) / 3600.0 * static_cast<double>(best.config.nodes) *
                           next_machine.price_per_hour;
  const double time_saving = remaining - remaining_next - restart_cost_s_;
  const double cost_saving = cost_now - cost_next;
  const double margin = o_.min_saving;
  bool pays = false;
  switch (r.plan->objective.kind) {
    case plan::Objective::Kind::Fastest:
    case plan::Objective::Kind::Deadline:
      pays = time_saving > margin * remaining;
      break;
    case plan::Objective::Kind::Cheapest:
    case plan::Objective::Kind::Budget:
      pays = cost_saving > margin * cost_now;
      break;
    case plan::Objective::Kind::Knee:
      pays = (time_saving > margin * remaining && cost_next <= cost_now * (1 + margin)) ||
             (cost_saving > margin * cost_now && remaining_next + restart_cost_s_ <= remaining * (1 + margin));
      break;
  }
  std::ostringstream reason;
  reason.precision(3);
  const double predicted_iter = prior_predictor_->point(config, machine).iteration_s;
  if (view.iteration_s) {
    reason << "measured step " << *view.iteration_s << " s against " << predicted_iter << " s planned; ";
  }
  reason << "B_noise " << view.b_noise << " (" << view.b_noise_source << "); the " << plan::describe(r.plan->objective)
         << " is now " << describe_config(best.config) << ": " << remaining_next << " s left there against "
         << remaining << " s here, a restart costs " << restart_cost_s_ << " s";
  json entry = {{"t_s", now},
                {"step", view.steps_done},
                {"from", config_json(catalog_, machine_, config)},
                {"to", config_json(catalog_, best.machine, best.config)},
                {"reason", reason.str()},
                {"predicted_saving_s", time_saving},
                {"predicted_saving_cost", cost_saving},
                {"restart_cost_s", restart_cost_s_},
                {"applied", pays},
                {"numbers",
                 {{"b_noise", view.b_noise},
                  {"iteration_s_measured", view.iteration_s ? json(*view.iteration_s) : json(nullptr)},
                  {"iteration_s_planned", predicted_iter},
                  {"compute_scale", predictor.compute_scale()},
                  {"remaining_s_here", remaining},
                  {"remaining_s_there", remaining_next},
                  {"remaining_fraction", refit_->remaining_fraction(view)}}}};
  const std::string to_key = entry["to"].dump();
  if (!pays && declined_to_ == to_key) return std::nullopt;  // said once already
  declined_to_ = pays ? "" : to_key;
  report_["replans"].push_back(entry);
  if (!pays) return std::nullopt;
  progress_.say("re-plan at step " + std::to_string(view.steps_done) + ": " + describe_config(config) + " -> " +
                describe_config(best.config) + " (" + reason.str() + ")");
  SegmentEnd end;
  end.kind = SegmentEnd::Kind::Resize;
  end.reason = reason.str();
  end.next = best.config;
  end.next_machine = best.machine;
  return end;
}

TuneOutcome Runner::train() {
  phase_ = "training";
  save_state();
  for (;;) {
    const auto end = run_segment(config_, 0, "train");
    save_state();
    switch (end.kind) {
      case SegmentEnd::Kind::Resize:
        machine_ = end.next_machine;
        config_ = end.next;
        continue;
      case SegmentEnd::Kind::WorkerDied:
        if (++retries_ > o_.max_retries) {
          return finish("failed", "a worker died " + std::to_string(retries_) + " times (max " +
                                      std::to_string(o_.max_retries) + " retries); the last: " + end.reason + "; the checkpoint is kept",
                        1);
        }
        note("a worker died (" + end.reason + "); resuming from the last checkpoint, retry " + std::to_string(retries_) +
             " of " + std::to_string(o_.max_retries));
        continue;
      case SegmentEnd::Kind::Interrupted:
        return finish("stopped", end.reason, 128 + g_stop_signal.load());
      case SegmentEnd::Kind::GoalOutOfReach:
        return finish("stopped", end.reason + "; the checkpoint is kept in " + (dir_ / "checkpoints").string(), 3);
      case SegmentEnd::Kind::Finished: {
        const auto best = metrics_.best_accuracy();
        if (o_.to_target()) {
          if (best && *best >= o_.target_accuracy) {
            return finish("succeeded", "test accuracy " + percent(*best) + " reached the target " +
                                           percent(o_.target_accuracy) + " at step " +
                                           std::to_string(metrics_.last_step()), 0);
          }
          return finish("stopped", "the target " + percent(o_.target_accuracy) + " was not reached within --max-epochs " +
                                       std::to_string(static_cast<int64_t>(std::ceil(o_.max_epochs))) + " (best " +
                                       percent(best.value_or(0)) + "); the checkpoint is kept", 3);
        }
        return finish("succeeded", std::to_string(static_cast<int64_t>(o_.epochs)) + " epochs done" +
                                       (best ? ", final test accuracy " + percent(metrics_.evaluations().back().test_accuracy) : ""),
                      0);
      }
    }
  }
}

// ---- the end --------------------------------------------------------------

void Runner::write_report() {
  const double total = now_s();
  report_["job"] = {{"model", o_.model},
                    {"dataset", o_.dataset},
                    {"objective", o_.objective},
                    {"objective_text", plan::describe(plan::parse_objective(o_.objective))},
                    {"resources", o_.resources},
                    {"backend", o_.backend},
                    {"optimizer", o_.optimizer},
                    {"target_accuracy", o_.to_target() ? json(o_.target_accuracy) : json(nullptr)},
                    {"epochs", o_.to_target() ? json(nullptr) : json(o_.epochs)},
                    {"out_dir", dir_.string()},
                    {"started", iso_time(origin_unix_)},
                    {"finished", report_.value("state", "running") == "running" ? json(nullptr) : json(iso_time(unix_now()))}};
  report_["phases"] = {{"profile_s", profile_s_},
                       {"pilot_s", pilot_s_},
                       {"train_s", train_s_},
                       {"restart_s", restart_s_},
                       {"total_s", total},
                       {"profiling_share", total > 0 ? (profile_s_ + pilot_s_) / total : 0.0}};
  const double train_samples = static_cast<double>(std::max<int64_t>(1, profile_.data.train_samples));
  json evaluations = json::array();
  for (const auto& e : metrics_.evaluations()) {
    evaluations.push_back({{"t_s", job_time(e.time)}, {"step", e.step}, {"epoch", e.samples / train_samples},
                           {"test_accuracy", e.test_accuracy}, {"test_loss", e.test_loss}});
  }
  report_["evaluations"] = evaluations;
  report_["measured"] = {{"time_s", total},
                         {"cost", spent_},
                         {"final_accuracy", metrics_.evaluations().empty()
                                                ? json(nullptr)
                                                : json(metrics_.evaluations().back().test_accuracy)},
                         {"best_accuracy", metrics_.best_accuracy() ? json(*metrics_.best_accuracy()) : json(nullptr)},
                         {"steps", metrics_.last_step()},
                         {"epochs", metrics_.samples() / train_samples},
                         {"restarts", restarts_measured_},
                         {"retries", retries_}};
  common::write_file_atomically((dir_ / "report.json").string(), report_.dump(2) + "\n");
  common::write_file_atomically((dir_ / "report.html").string(), render_report_html(report_));
}

TuneOutcome Runner::finish(const std::string& state, const std::string& reason, int exit_code) {
  account(now_s());
  report_["state"] = state;
  report_["reason"] = reason;
  report_["exit_code"] = exit_code;  // what `tula tune` exits with: a supervisor tells "out of reach" (3) from a stop
  // The remaining time was predicted to the goal: only a job that got there measures it.
  report_["remaining_error"] = state == "succeeded" ? remaining_time_errors(report_["timeline"], now_s()) : json::array();
  phase_ = state == "succeeded" ? "done" : phase_;
  save_state();
  TuneOutcome out{state, reason, exit_code, (dir_ / "report.json").string(), (dir_ / "report.html").string()};
  progress_.say(closing_summary(report_));
  return out;
}

TuneOutcome Runner::run() {
  open_directory();
  try {
    check_inputs();
    accounted_at_ = now_s();
    if (phase_ == "new") {
      profile();
      phase_ = "profiled";
    }
    load_catalog();
    save_state();
    if (phase_ == "profiled") {
      if (!o_.start_at.empty()) {
        const auto manual = parse_manual_config(o_.start_at);
        config_.workers_per_node = manual.workers;
        config_.batch_per_worker = manual.batch_per_worker;
        config_.accumulation_steps = manual.accumulation_steps;
        report_["chosen"] = config_json(catalog_, machine_, config_);
        note("started at " + describe_config(config_) + " as --start-at asks; re-planned from its own measurements");
      } else {
        if (o_.pilot_steps > 0) pilot();
        initial_plan();
      }
      phase_ = "planned";
      save_state();
    }
    if (phase_ == "done") return finish("succeeded", report_.value("reason", "already finished"), 0);
    return train();
  } catch (const BackendError& e) {
    return finish("failed", e.what(), 1);
  } catch (const std::exception& e) {
    if (g_stop_signal.load() != 0) return finish("stopped", e.what(), 128 + g_stop_signal.load());
    return finish("failed", e.what(), 1);
  }
}

}  // namespace

void request_tune_stop(int signal) { g_stop_signal.store(signal); }

TuneOutcome run_tune(TuneOptions options, const std::string& tula_binary) {
  if (!options.resume) options.validate();
  if (options.out_dir.empty()) throw std::invalid_argument("--out is required");
  Runner runner(std::move(options), tula_binary);
  return runner.run();
}

}  // namespace tula::tune
