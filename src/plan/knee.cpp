#include "plan/knee.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::plan {

namespace {

// Within this share of the knee's time x cost the runner-up is as good a knee
// within the models' own error (the whole-job time at the plan: about 10%,
// docs/benchmarks/decisions.md).
constexpr double kClearMargin = 0.10;

}  // namespace

FrontKnee front_knee(const std::vector<TimeCost>& front) {
  FrontKnee k;
  if (front.empty()) return k;
  if (front.size() == 1) return k;
  for (size_t i = 1; i < front.size(); ++i) {
    if (time_cost_product(front[i]) < time_cost_product(front[k.index])) k.index = i;
  }
  k.detected = true;
  return k;
}

KneeSensitivity knee_sensitivity(const std::vector<TimeCost>& front, size_t knee,
                                 const std::vector<size_t>& to_candidate) {
  KneeSensitivity s;
  if (front.size() < 2) {
    s.statement = "The front is a single configuration: it is the knee.";
    return s;
  }
  size_t runner_up = knee == 0 ? 1 : 0;
  for (size_t i = 0; i < front.size(); ++i) {
    if (i != knee && time_cost_product(front[i]) < time_cost_product(front[runner_up])) runner_up = i;
  }
  const auto& base = front[knee];
  const auto& other = front[runner_up];
  KneeVariant v;
  v.name = "the runner-up by time x cost";
  v.candidate = to_candidate[runner_up];
  v.time_change = other.time / base.time - 1;
  v.cost_change = base.cost > 0 ? other.cost / base.cost - 1 : 0.0;
  s.variants.push_back(v);
  const double above = time_cost_product(base) > 0 ? time_cost_product(other) / time_cost_product(base) - 1 : 0.0;
  s.stable = above > kClearMargin;
  const std::string runner = fmt::format(
      "the runner-up by time x cost, {}% {} and {}% {}, has a product {}% above it",
      common::format_number(100 * std::abs(v.time_change), 2), v.time_change < 0 ? "faster" : "slower",
      common::format_number(100 * std::abs(v.cost_change), 2), v.cost_change < 0 ? "cheaper" : "dearer",
      common::format_number(100 * above, 2));
  s.statement = s.stable ? "The knee is clear: " + runner + "."
                         : "The knee is close: " + runner + fmt::format(", within the models' own error ({:.0f}%). "
                                                                         "Read the knee as a region of the front, not "
                                                                         "a point.",
                                                                         100 * kClearMargin);
  return s;
}

FrontChoice choose_on_front(const std::vector<TimeCost>& points, const Objective& objective,
                            const std::string& currency) {
  FrontChoice c;
  c.front = pareto_front(points);
  for (size_t i : c.front) c.front_points.push_back(points[i]);
  c.knee = front_knee(c.front_points);
  c.chosen = select_on_front(objective, c.front_points, c.knee.index, currency);
  return c;
}

}  // namespace tula::plan
