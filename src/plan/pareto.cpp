#include "plan/pareto.hpp"

#include <algorithm>
#include <limits>
#include <numeric>

namespace tula::plan {

std::vector<size_t> pareto_front(const std::vector<TimeCost>& p) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (p[a].time != p[b].time) return p[a].time < p[b].time;
    if (p[a].cost != p[b].cost) return p[a].cost < p[b].cost;
    return a < b;
  });
  std::vector<size_t> front;
  double best_cost = std::numeric_limits<double>::infinity();
  for (size_t i : order) {
    if (p[i].cost < best_cost) {
      front.push_back(i);
      best_cost = p[i].cost;
    }
  }
  return front;
}

}  // namespace tula::plan
