// The plan as one SVG figure a person reads at a glance: time and cost
// against the global batch (every configuration faint, the best at each batch
// as a dashed line, the Pareto front in blue), and the front itself in the
// time/cost plane with each point's intervals, the knee ringed in red and the
// chosen configuration marked. Drawn with src/render: self-contained SVG 1.1,
// no scripts or external fonts, every name escaped.
#pragma once
#include <string>

#include "plan/planner.hpp"

namespace tula::plan {

// std::invalid_argument for a plan with no configuration or no front.
std::string render_svg(const Plan& plan);

}  // namespace tula::plan
