// The knee of a time/cost Pareto front, and how far it moves when the front's
// endpoints are dropped or its axes are log-scaled (Kneedle depends on the
// normalization, so a knee that moves under these changes is a weak one).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "plan/pareto.hpp"
#include "plan/kneedle.hpp"
#include "plan/objective.hpp"
#include "plan/planner.hpp"

namespace tula::plan {

struct FrontKnee {
  size_t index = 0;       // into the front
  bool detected = false;  // false: Kneedle declared no knee; fallback used
  std::string fallback;   // what was used instead, when !detected
};

// Knee of a front (fastest first, cost falling): a convex, decreasing curve
// in Kneedle's terms. Fallbacks: 1 point: it; 2 points: the cheaper; no knee
// declared: the point farthest below the chord.
FrontKnee front_knee(const std::vector<TimeCost>& front, double sensitivity = 1.0, Scale scale = Scale::Linear);

// Knee under three variants (log axes; without the fastest point; without
// the cheapest point), compared with `knee` (index into the front).
// `to_candidate` maps front positions to candidate indices.
KneeSensitivity knee_sensitivity(const std::vector<TimeCost>& front, size_t knee,
                                 const std::vector<size_t>& to_candidate, double sensitivity = 1.0);

// The planner's choice rule on any points: their Pareto front, its knee, and
// the point `objective` picks (throws as select_on_front does). The planner
// applies it to predicted points, the decision benches to measured ones.
struct FrontChoice {
  std::vector<size_t> front;          // indices into the points, fastest first
  std::vector<TimeCost> front_points; // those points, in that order
  FrontKnee knee;                     // its index is into `front`
  size_t chosen = 0;                  // index into `front`
};
FrontChoice choose_on_front(const std::vector<TimeCost>& points, const Objective& objective, double sensitivity,
                            const std::string& currency);

}  // namespace tula::plan
