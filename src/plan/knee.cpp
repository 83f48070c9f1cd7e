#include "plan/knee.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::plan {

FrontKnee front_knee(const std::vector<TimeCost>& front, double sensitivity, Scale scale) {
  FrontKnee k;
  if (front.empty()) return k;
  if (front.size() == 1) {
    k.fallback = "the front is a single configuration";
    return k;
  }
  if (front.size() == 2) {
    k.index = 1;
    k.fallback = "the front has two configurations and no bend: the cheaper is taken";
    return k;
  }
  std::vector<double> x, y;
  for (const auto& p : front) x.push_back(p.time), y.push_back(p.cost);
  if (scale == Scale::Log) {
    for (double v : y) {
      if (!(v > 0)) scale = Scale::Linear;  // zero cost (free machine): log axes undefined
    }
  }
  const auto r = kneedle(x, y, Curve::Convex, Direction::Decreasing, sensitivity, scale);
  if (r.knee) {
    k.index = *r.knee;
    k.detected = true;
  } else {
    k.index = r.max_difference;
    k.fallback = "Kneedle declared no knee (the front barely bends); the point farthest below the chord is taken";
  }
  return k;
}

KneeSensitivity knee_sensitivity(const std::vector<TimeCost>& front, size_t knee,
                                 const std::vector<size_t>& to_candidate, double sensitivity) {
  KneeSensitivity s;
  const auto& base = front[knee];
  auto add = [&](const std::string& name, const std::vector<TimeCost>& f, size_t offset, Scale scale) {
    KneeVariant v;
    v.name = name;
    if (f.size() >= 1) {
      const auto k = front_knee(f, sensitivity, scale);
      const size_t at = k.index + offset;
      v.candidate = to_candidate[at];
      v.time_change = front[at].time / base.time - 1;
      v.cost_change = base.cost > 0 ? front[at].cost / base.cost - 1 : 0.0;
      if (at != knee) s.stable = false;
    }
    s.variants.push_back(v);
  };
  add("log-scaled axes", front, 0, Scale::Log);
  if (front.size() > 3) {
    add("without the fastest configuration", std::vector<TimeCost>(front.begin() + 1, front.end()), 1, Scale::Linear);
    add("without the cheapest configuration", std::vector<TimeCost>(front.begin(), front.end() - 1), 0, Scale::Linear);
  }
  if (s.stable) {
    s.statement = fmt::format("The knee is stable: log-scaled axes{} pick the same configuration.",
                              front.size() > 3 ? " and dropping either end of the front" : "");
  } else {
    std::string o = "The knee is sensitive:";
    bool first = true;
    for (const auto& v : s.variants) {
      if (!v.candidate || (std::abs(v.time_change) < 1e-12 && std::abs(v.cost_change) < 1e-12)) continue;
      o += fmt::format("{}{} moves it to a configuration {}% {} and {}% {}", first ? " " : "; ", v.name,
                       common::format_number(100 * std::abs(v.time_change), 2), v.time_change < 0 ? "faster" : "slower",
                       common::format_number(100 * std::abs(v.cost_change), 2), v.cost_change < 0 ? "cheaper" : "dearer");
      first = false;
    }
    s.statement = o + ". Read the knee as a region of the front, not a point.";
  }
  return s;
}

FrontChoice choose_on_front(const std::vector<TimeCost>& points, const Objective& objective, double sensitivity,
                            const std::string& currency) {
  FrontChoice c;
  c.front = pareto_front(points);
  for (size_t i : c.front) c.front_points.push_back(points[i]);
  c.knee = front_knee(c.front_points, sensitivity);
  c.chosen = select_on_front(objective, c.front_points, c.knee.index, currency);
  return c;
}

}  // namespace tula::plan
