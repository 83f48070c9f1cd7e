// Replays the target forecasts along a recorded training run at one batch
// size: reads one metrics.jsonl on stdin and, for each target the run
// reaches, walks its evaluations as a tune watch would see them and prints
// one JSON line per evaluation before the crossing: where the crossing
// truly was and where each forecast put it.
//
//   tula_forecast_replay --targets 0.85,0.87 < metrics.jsonl
//
// Forecasts: "evaluations" is the power law on the evaluations alone
// (tune/accuracy_forecast.hpp), "loss" the training loss with its link to
// the evaluations (tune/loss_forecast.hpp), "combined" their geometric mean
// (what the job planned with before the exponent prior); "anchored" the power
// law with the exponent prior (kRecordedCurvesExponentPrior), from the first
// evaluation on, and "anchored_combined" its geometric mean with the loss'.
// Progress is counted in steps (one batch size: B_noise scales the axis, not
// the crossing's step).
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "comma_list.hpp"
#include "records/metrics_file.hpp"
#include "tune/accuracy_forecast.hpp"
#include "tune/loss_forecast.hpp"

namespace {

using tula::tune::AccuracyPoint;
using tula::tune::LossPoint;

nlohmann::json or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> targets;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--targets") {
      targets = comma_list(argv[i + 1]);
    } else {
      std::cerr << "unknown option " << flag << "\n";
      return 2;
    }
  }
  if (targets.empty()) {
    std::cerr << "usage: tula_forecast_replay --targets T1,T2 < metrics.jsonl\n";
    return 2;
  }
  const auto records = tula::records::read_metrics(std::cin, "stdin");
  std::vector<LossPoint> steps;
  std::vector<AccuracyPoint> evaluations;
  for (const auto& r : records) {
    if (const auto* iter = std::get_if<tula::records::IterRecord>(&r)) {
      if (!iter->skipped) steps.push_back({static_cast<double>(iter->step), iter->loss});
    } else if (const auto e = tula::records::evaluation_of(r)) {
      evaluations.push_back({static_cast<double>(e->step), e->evaluation.test_accuracy});
    }
  }
  for (double target : targets) {
    std::optional<double> crossing;
    for (const auto& e : evaluations) {
      if (e.accuracy >= target) {
        crossing = e.min_steps;
        break;
      }
    }
    if (!crossing) continue;
    std::vector<AccuracyPoint> seen;
    for (const auto& e : evaluations) {
      if (e.min_steps >= *crossing) break;
      seen.push_back(e);
      std::vector<LossPoint> so_far;
      for (const auto& s : steps) {
        if (s.min_steps <= e.min_steps) so_far.push_back(s);
      }
      const auto by_evaluations = tula::tune::forecast_target(seen, target);
      const auto by_loss = tula::tune::forecast_from_loss(so_far, seen, target);
      const auto anchored = tula::tune::forecast_target(seen, target, tula::tune::kRecordedCurvesExponentPrior);
      std::cout << nlohmann::json{{"target", target},
                                  {"step", e.min_steps},
                                  {"evaluations", seen.size()},
                                  {"crossing_step", *crossing},
                                  {"evaluations_forecast", or_null(by_evaluations.target_min_steps)},
                                  {"loss_forecast", or_null(by_loss.target_min_steps)},
                                  {"combined_forecast", or_null(tula::tune::combined_target_min_steps(by_evaluations, by_loss))},
                                  {"anchored_forecast", or_null(anchored.target_min_steps)},
                                  {"anchored_combined_forecast", or_null(tula::tune::combined_target_min_steps(anchored, by_loss))},
                                  {"loss_note", by_loss.note}}
                       .dump()
                << "\n";
    }
  }
  return 0;
}
