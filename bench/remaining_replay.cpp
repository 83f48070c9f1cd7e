// Replays the remaining-time prediction of a recorded `tula tune` job at
// every watch, taken apart: reads the job's folder (tune.json, profile.json,
// report.json, metrics.jsonl), cuts the metrics where each watch read them,
// re-fits as the watch did (replan_remainder) and prints one JSON line per
// watch: the remaining time recorded and replayed, and what it is made of
// (the steps to the target, the predicted step and evaluation at the running
// configuration, and what the job had measured of both), and the remaining
// time as the mean stop over S*'s estimate (what jobs predict now) beside the
// stop after its median (what they predicted before). Both include the test
// split's reading at the end (final_test_s_predicted, printed apart), which
// jobs counted from 6eda90a on. Also S*'s estimate's spread (target_log_sd;
// the prior's, prior_log_sd) and the time left's range (range_s, which jobs
// give from ad743c8 on).
//
//   tula_remaining_replay --job DIR --resources CATALOG.json [--prior-epochs E --prior-log-sd S] [--history F]
//
// The job's prior is read back from its report's note ("the prior: E epochs
// at the reference batch B (log sd S) from N earlier jobs"); a job without
// one planned with the stated prior. --prior-epochs and --prior-log-sd put
// another prior in its place (epochs at the reference batch): what a history
// kept another way would have said. --history puts in its place the prior
// that file's lines before the job's own give as tune::JobHistory counts them
// now (a job history as bench/history_curves.py fills it in).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "plan/catalog.hpp"
#include "predict/profile.hpp"
#include "records/tune_report.hpp"
#include "records/tune_state.hpp"
#include "tune/job_history.hpp"
#include "tune/job_metrics.hpp"
#include "tune/refit.hpp"
#include "tune/tune_options.hpp"
#include "tune/watch.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

tula::tune::EpochsPrior prior_of(const tula::records::TuneReport& report) {
  for (const auto& note : report.notes) {
    const std::string head = "the prior: ";
    if (note.rfind(head, 0) != 0) continue;
    tula::tune::EpochsPrior p;
    p.unit = tula::tune::EpochsPrior::Unit::ReferenceEpochs;
    p.epochs = std::stod(note.substr(head.size()));
    const auto sd = note.find("(log sd ");
    if (sd != std::string::npos) p.log_sd = std::stod(note.substr(sd + 8));
    const auto from = note.find(" from ");
    if (from != std::string::npos) p.jobs = std::stoi(note.substr(from + 6));
    p.source = note;
    return p;
  }
  return tula::tune::stated_epochs_prior();
}

// The metrics as the watch at `point` read them: every record up to the step
// it saw, and what came after that step before the watch.
void cut_metrics(const std::vector<std::string>& lines, double origin, const tula::records::TimelinePoint& point,
                 const fs::path& path) {
  std::ofstream out(path);
  bool past_step = false;
  for (const auto& line : lines) {
    const auto r = json::parse(line);
    const bool iter = r.value("type", "") == "iter";
    if (iter && past_step) break;
    if (past_step && r.value("time", 0.0) - origin > point.t_s) break;
    out << line << "\n";
    if (iter && r.value("step", int64_t{0}) >= point.step) past_step = true;
  }
}

// The prior `history`'s lines before `job_dir`'s own give the job's setup.
tula::tune::EpochsPrior prior_from_history(const std::string& history, const std::string& job_dir,
                                           const tula::tune::TuneOptions& options) {
  const fs::path before = fs::temp_directory_path() / ("tula-remaining-replay-history-" + std::to_string(::getpid()));
  {
    std::ifstream in(history);
    if (!in) throw std::runtime_error("--history " + history + ": cannot read it");
    std::ofstream out(before);
    for (std::string line; std::getline(in, line);) {
      if (json::parse(line, nullptr, false).value("job", "") == job_dir) break;
      out << line << "\n";
    }
  }
  auto prior = tula::tune::JobHistory(before.string())
                   .prior_for(tula::tune::history_setup(options, tula::tune::model_digest(options)));
  fs::remove(before);
  return prior;
}

}  // namespace

int main(int argc, char** argv) {
  std::string job_dir, resources;
  double prior_epochs = 0, prior_log_sd = 0;
  std::string history;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--job") {
      job_dir = argv[i + 1];
    } else if (flag == "--resources") {
      resources = argv[i + 1];
    } else if (flag == "--prior-epochs") {
      prior_epochs = std::stod(argv[i + 1]);
    } else if (flag == "--prior-log-sd") {
      prior_log_sd = std::stod(argv[i + 1]);
    } else if (flag == "--history") {
      history = argv[i + 1];
    } else {
      std::cerr << "unknown option " << flag << "\n";
      return 2;
    }
  }
  if (job_dir.empty() || resources.empty()) {
    std::cerr << "usage: tula_remaining_replay --job DIR --resources CATALOG.json\n";
    return 2;
  }
  using namespace tula;
  const auto state = records::read_tune_state(job_dir);
  const auto report = *records::read_tune_report(job_dir);
  const auto options = tune::tune_options_from_json(state.options);
  auto profile = predict::load_profile((fs::path(job_dir) / "profile.json").string());
  tune::apply_validation_split(profile, options);  // as the runner counts the job's data
  const auto catalog = plan::load_catalog(resources);
  std::vector<std::string> lines;
  {
    std::ifstream in(fs::path(job_dir) / "metrics.jsonl");
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) lines.push_back(l);
  }
  auto prior_epochs_used = prior_of(report);
  if (prior_epochs > 0) {
    prior_epochs_used = {tune::EpochsPrior::Unit::ReferenceEpochs, prior_epochs,
                         prior_log_sd > 0 ? prior_log_sd : prior_epochs_used.log_sd, 0, "--prior-epochs"};
  }
  if (!history.empty()) prior_epochs_used = prior_from_history(history, job_dir, options);
  const tune::Refit refit(profile, options, prior_epochs_used);
  const auto prior = predict::Predictor::from_profile(profile, refit.predictor_options());
  const auto whole = plan::parse_objective(options.job.objective);
  const fs::path cut = fs::temp_directory_path() / ("tula-remaining-replay-" + std::to_string(::getpid()) + ".jsonl");
  for (const auto& point : report.timeline) {
    const records::SegmentRecord* segment = &report.segments.front();
    for (const auto& s : report.segments)
      if (s.start_t_s <= point.t_s) segment = &s;
    cut_metrics(lines, state.origin_unix, point, cut);
    tune::JobMetrics metrics(cut.string());
    metrics.poll();
    tune::RunningJob running;
    for (size_t m = 0; m < catalog.machines.size(); ++m)
      if (catalog.machines[m].spec.name == segment->config.machine) running.machine = m;
    running.config = segment->config.config;
    running.train_samples = static_cast<double>(profile.data.train_samples);
    const tune::JobClock clock{point.t_s, point.cost_so_far, options.watch.restart_cost_s};
    const auto r = tune::replan_remainder(refit, metrics, running, catalog, whole, clock, tune::NodeChoice::UpToMaxNodes);
    if (!r.planner) {
      std::cout << json{{"t_s", point.t_s}, {"step", point.step}, {"fit_error", r.fit_error}}.dump() << "\n";
      continue;
    }
    const auto& machine = catalog.machines.at(running.machine).spec;
    const auto& predictor = r.planner->predictor_for(running.machine);
    const auto at = predictor.point(running.config, machine);
    const double steps = refit.remaining_steps(r.view, running.config);
    auto at_median = r.view;  // without the estimate's spread: the stop after S*'s median
    at_median.target_estimate.reset();
    const double epochs_left = steps * static_cast<double>(running.config.global_batch()) / running.train_samples;
    const auto range = refit.remaining_range(r.view, running.config, predictor, machine);
    std::cout << json{{"t_s", point.t_s},
                      {"step", point.step},
                      {"recorded_remaining_s", point.predicted_remaining_s},
                      {"replayed_remaining_s", refit.remaining_seconds(r.view, running.config, predictor, machine)},
                      {"median_stop_remaining_s",
                       refit.remaining_seconds(at_median, running.config, predictor, machine)},
                      {"steps_left", steps},
                      {"iteration_s_predicted", at.iteration_s},
                      {"iteration_s_measured", r.view.iteration_s.value_or(0.0)},
                      {"evaluations_left", epochs_left / options.watch.eval_every_epochs},
                      {"eval_s_predicted", at.eval_s},
                      {"eval_s_measured", r.view.eval_s},
                      {"final_test_s_predicted", at.final_test_s},
                      {"target_min_steps", r.view.target_min_steps},
                      {"target_log_sd", r.view.target_estimate ? json(r.view.target_estimate->log_sd) : json(nullptr)},
                      {"prior_log_sd", prior_epochs_used.log_sd},
                      {"range_s", range ? json::array({range->low_s, range->high_s}) : json(nullptr)},
                      {"min_steps_done", r.view.min_steps_done},
                      {"b_noise", r.view.b_noise}}
                     .dump()
              << "\n";
  }
  fs::remove(cut);
  return 0;
}
