// The planner's choice rule applied to measured points: reads JSON lines of
// {"time_s", "cost"} on stdin (one per configuration of the oracle grid) and
// prints one JSON object: the indices of the Pareto front (fastest first),
// and the index (into the input) that each objective picks from it, by the
// same functions the planner uses on its predicted front (plan/pareto,
// plan/knee, plan/objective). bench/decision_oracle.py grades `tula tune`'s
// choice against these.
//
//   tula_front_knee < points.jsonl
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/knee.hpp"
#include "plan/objective.hpp"
#include "plan/pareto.hpp"
#include "plan/planner.hpp"

int main() {
  using namespace tula::plan;
  std::vector<TimeCost> points;
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line);
    points.push_back({j.at("time_s").get<double>(), j.at("cost").get<double>()});
  }
  if (points.empty()) {
    std::cerr << "tula_front_knee: no points on stdin (JSON lines with time_s and cost)\n";
    return 2;
  }
  const auto on_front = pareto_front(points);
  std::vector<TimeCost> front;
  for (size_t i : on_front) front.push_back(points[i]);
  const auto knee = front_knee(front, PlannerOptions{}.kneedle_sensitivity);
  nlohmann::json out = {{"front", on_front}, {"knee_detected", knee.detected}};
  for (const auto& [name, objective] : {std::pair{"knee", Objective::knee()}, std::pair{"fastest", Objective::fastest()},
                                        std::pair{"cheapest", Objective::cheapest()}}) {
    out[name] = on_front[select_on_front(objective, front, knee.index, "USD")];
  }
  std::cout << out.dump() << "\n";
  return 0;
}
