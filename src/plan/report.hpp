// A plan for people (a terminal table) and for programs (JSON).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "plan/planner.hpp"

namespace tula::plan {

// The Pareto front (at most `max_rows`, always with the fastest, cheapest,
// knee and chosen rows), then the chosen configuration with intervals, the
// explanation, the knee's sensitivity, what was skipped and the assumptions.
std::string format_table(const Plan& plan, size_t max_rows = 24);

// Everything in the table plus the per-global-batch envelope (fastest time and
// lowest cost at each global batch) and every feasible configuration's (time,
// cost) ("candidates": evenly thinned to at most 2000 rows), for plotting
// outside tula (`tula plan --json`) and in the tune report.
nlohmann::json to_json(const Plan& plan);

}  // namespace tula::plan
