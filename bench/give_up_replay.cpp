// Replays the give-up verdict along a recorded training run: reads one
// metrics.jsonl on stdin and, for each target accuracy and budget given,
// walks the run's evaluations in order as a tune watch would see them, and
// prints one JSON line: where the target was first reached within the budget
// (if ever), and the first evaluation at which each rule judged it out of
// reach. A give-up before a reached target is a wrong one.
//
//   tula_give_up_replay --targets 0.87,0.90 --max-epochs 20,80 [--give-up-after 0.2] < metrics.jsonl
//
// Rules: "interval" is the watch's (tune/watch.hpp judge_target); "point" is
// the rule it replaced: a plateau (no new best over the last four
// evaluations, from six on; or a fitted exponent under 0.02 from three on),
// or the point forecast past the budget from four evaluations on.
// One batch size per run, so progress is counted in steps (B_noise drops out
// of the forecast at a fixed batch: it scales the axis, not the crossing's epoch).
#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comma_list.hpp"
#include "records/metrics_file.hpp"
#include "tune/accuracy_forecast.hpp"
#include "tune/watch.hpp"

namespace {

using tula::tune::AccuracyPoint;

struct Reading {
  double step = 0, epoch = 0, accuracy = 0;
};

// The rule the interval rule replaced, as it was written.
bool point_rule_gives_up(const tula::tune::AccuracyForecast& f, const std::vector<AccuracyPoint>& points,
                         double target, double epochs_done, double epochs_per_step, double max_epochs) {
  if (points.size() >= 6) {
    double before = 0, recent = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      double& best = i + 4 < points.size() ? before : recent;
      best = std::max(best, points[i].accuracy);
    }
    if (recent < before + 0.002 && recent < target) return true;
  }
  if (f.fit && f.exponent < 0.02 && points.size() >= 3 && points.back().accuracy < target) return true;
  if (f.target_min_steps && points.size() >= 4) {
    const double epochs_needed = epochs_done + std::max(0.0, *f.target_min_steps - points.back().min_steps) * epochs_per_step;
    if (epochs_needed > max_epochs) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> targets, budgets;
  double give_up_after = 0.2;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--targets") targets = comma_list(argv[i + 1]);
    else if (flag == "--max-epochs") budgets = comma_list(argv[i + 1]);
    else if (flag == "--give-up-after") give_up_after = std::stod(argv[i + 1]);
    else {
      std::cerr << "unknown option " << flag << "\n";
      return 2;
    }
  }
  if (targets.empty() || budgets.empty()) {
    std::cerr << "usage: tula_give_up_replay --targets T1,T2 --max-epochs E1,E2 [--give-up-after S] < metrics.jsonl\n";
    return 2;
  }
  const auto records = tula::records::read_metrics(std::cin, "stdin");
  double train_samples = 0, global_batch = 0;
  std::vector<Reading> readings;
  for (const auto& r : records) {
    if (const auto* start = std::get_if<tula::records::StartRecord>(&r)) {
      train_samples = static_cast<double>(start->train_samples);
      global_batch = static_cast<double>(start->global_batch);
    }
    if (const auto e = tula::records::evaluation_of(r)) {
      const double step = static_cast<double>(e->step);
      readings.push_back({step, step * global_batch / train_samples, e->evaluation.test_accuracy});
    }
  }
  if (train_samples <= 0 || global_batch <= 0) {
    std::cerr << "no start record with train_samples and global_batch\n";
    return 1;
  }
  const double epochs_per_step = global_batch / train_samples;
  for (double max_epochs : budgets) {
    for (double target : targets) {
      tula::tune::WatchPolicy policy;
      policy.to_target = true;
      policy.target_accuracy = target;
      policy.max_epochs = max_epochs;
      policy.give_up_after = give_up_after;
      std::vector<AccuracyPoint> points;
      std::optional<double> reached, interval_gave_up, point_gave_up;
      std::string interval_words;
      double best = 0;
      int seen = 0;
      for (const auto& r : readings) {
        if (r.epoch > max_epochs + 1e-9) break;
        ++seen;
        if (r.accuracy >= target) {
          reached = r.epoch;
          break;
        }
        best = std::max(best, r.accuracy);
        points.push_back({r.step, r.accuracy});
        const auto f = tula::tune::forecast_target(points, target);
        const auto verdict =
            tula::tune::judge_target(f, {r.epoch, r.step, epochs_per_step, best}, policy);
        if (verdict.out_of_reach && !interval_gave_up) {
          interval_gave_up = r.epoch;
          interval_words = verdict.words;
        }
        if (!point_gave_up && point_rule_gives_up(f, points, target, r.epoch, epochs_per_step, max_epochs)) {
          point_gave_up = r.epoch;
        }
      }
      const auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
      std::cout << nlohmann::json{{"target", target},
                                  {"max_epochs", max_epochs},
                                  {"give_up_after", give_up_after},
                                  {"evaluations_seen", seen},
                                  {"best_accuracy", best},
                                  {"reached_epoch", opt(reached)},
                                  {"interval_gave_up_epoch", opt(interval_gave_up)},
                                  {"interval_reason", interval_words},
                                  {"point_gave_up_epoch", opt(point_gave_up)}}
                       .dump()
                << "\n";
    }
  }
  return 0;
}
