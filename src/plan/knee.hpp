// The knee of a time/cost Pareto front: the configuration of least time x
// cost. Along the front (fastest first, cost falling) a step to the next
// faster configuration pays where it saves a larger share of the time than it
// adds to the money (the product falls); the knee is where that stops: past
// it every step buys less speed, relatively, than it costs. The rule reads
// the two points' own ratios, so it does not depend on the units, the prices'
// scale or how far the front reaches: a slow, cheap configuration added at
// its end does not move it (as a knee of the front's normalized range, such as
// Kneedle's, does). docs/models.md, "Knee", has the measured case for it.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "plan/objective.hpp"
#include "plan/pareto.hpp"
#include "plan/planner.hpp"

namespace tula::plan {

struct FrontKnee {
  size_t index = 0;       // into the front
  bool detected = false;  // false: the front has one configuration, which is taken
};

// What the knee makes least: a configuration's time x cost. The knee's move
// (tune/watch.hpp, resize_pays) weighs what is left to run by it too.
inline double time_cost_product(const TimeCost& p) { return p.time * p.cost; }

// Knee of a front (fastest first, cost falling); of equal products the faster.
FrontKnee front_knee(const std::vector<TimeCost>& front);

// How clear the knee is: the runner-up by time x cost on the front and how
// far its product lies above the knee's. `to_candidate` maps front positions
// to candidate indices.
KneeSensitivity knee_sensitivity(const std::vector<TimeCost>& front, size_t knee,
                                 const std::vector<size_t>& to_candidate);

// The planner's choice rule on any points: their Pareto front, its knee, and
// the point `objective` picks (throws as select_on_front does). The planner
// applies it to predicted points, the decision benches to measured ones.
struct FrontChoice {
  std::vector<size_t> front;          // indices into the points, fastest first
  std::vector<TimeCost> front_points; // those points, in that order
  FrontKnee knee;                     // its index is into `front`
  size_t chosen = 0;                  // index into `front`
};
FrontChoice choose_on_front(const std::vector<TimeCost>& points, const Objective& objective,
                            const std::string& currency);

}  // namespace tula::plan
