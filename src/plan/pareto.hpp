// The Pareto front of points to minimize in two objectives (time, cost): the
// points no other point beats in both. Sort by time then cost and sweep,
// keeping a point only when it is strictly cheaper than every faster one:
// O(n log n).
#pragma once
#include <cstddef>
#include <vector>

namespace tula::plan {

struct TimeCost {
  double time = 0;
  double cost = 0;
};

// Indices of the front, fastest first (so cost strictly falls along it). Of
// points equal in both objectives only the first is kept.
std::vector<size_t> pareto_front(const std::vector<TimeCost>& points);

// True when a is at least as good as b in both and better in one.
inline bool dominates(const TimeCost& a, const TimeCost& b) {
  return a.time <= b.time && a.cost <= b.cost && (a.time < b.time || a.cost < b.cost);
}

}  // namespace tula::plan
