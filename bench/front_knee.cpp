// The planner's choice rule applied to measured points: reads JSON lines of
// {"time_s", "cost"} on stdin (one per configuration of the oracle grid) and
// prints one JSON object: the indices of the Pareto front (fastest first),
// and the index (into the input) that each objective picks from it, by the
// planner's own rule (plan::choose_on_front). bench/decision_oracle.py grades `tula tune`'s
// choice against these.
//
//   tula_front_knee < points.jsonl
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/knee.hpp"
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
  nlohmann::json out;
  for (const auto& [name, objective] : {std::pair{"knee", Objective::knee()}, std::pair{"fastest", Objective::fastest()},
                                        std::pair{"cheapest", Objective::cheapest()}}) {
    const auto choice = choose_on_front(points, objective, "USD");
    out["front"] = choice.front;
    out["knee_detected"] = choice.knee.detected;
    out[name] = choice.front[choice.chosen];
  }
  std::cout << out.dump() << "\n";
  return 0;
}
