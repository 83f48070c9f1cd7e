#include "tune/accuracy_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "predict/stats.hpp"
#include "predict/statistical_model.hpp"

namespace tula::tune {
namespace {

// No new best by this much over the last kFlatWindow evaluations, below the
// target, is a curve that has flattened. Test accuracy at a constant rate is
// noisy (points apart between evaluations), so it takes a window, not a small
// gain between two.
constexpr double kFlatGain = 0.002;
constexpr size_t kFlatWindow = 4;
// An exponent this small means the error barely falls with more steps: no crossing to forecast.
constexpr double kFlatExponent = 0.02;
// One-sided level of the prediction interval.
constexpr double kIntervalLevel = 0.95;
// Grid points per search for the interval's first crossing (log-spaced).
constexpr int kSearchPoints = 400;

bool has_flattened(const std::vector<AccuracyPoint>& points, double target) {
  if (points.size() < 2 * kFlatWindow - 2) return false;
  double before = 0, recent = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    double& best = i + kFlatWindow < points.size() ? before : recent;
    best = std::max(best, points[i].accuracy);
  }
  return recent < before + kFlatGain && recent < target;
}

// The weighted sums of log(error) on log(steps); weights grow with the
// evaluation's index so the curve near the present decides.
struct WeightedSums {
  double weight_sum = 0, x_mean = 0, y_mean = 0, sxx = 0, sxy = 0;
};

WeightedSums weighted_sums(const std::vector<AccuracyPoint>& points) {
  WeightedSums m;
  double sx = 0, sy = 0;
  for (size_t i = 0; i < points.size(); ++i) {
    const double w = static_cast<double>(i + 1);
    m.weight_sum += w;
    sx += w * std::log(points[i].min_steps);
    sy += w * std::log(1 - points[i].accuracy);
  }
  m.x_mean = sx / m.weight_sum;
  m.y_mean = sy / m.weight_sum;
  for (size_t i = 0; i < points.size(); ++i) {
    const double w = static_cast<double>(i + 1);
    const double dx = std::log(points[i].min_steps) - m.x_mean;
    m.sxx += w * dx * dx;
    m.sxy += w * dx * (std::log(1 - points[i].accuracy) - m.y_mean);
  }
  return m;
}

std::optional<PowerLawFit> fit_power_law(const std::vector<AccuracyPoint>& points, const WeightedSums& m) {
  if (m.sxx <= 1e-12) return std::nullopt;
  PowerLawFit f;
  f.weight_sum = m.weight_sum;
  f.x_mean = m.x_mean;
  f.sxx = m.sxx;
  f.slope = m.sxy / m.sxx;
  f.intercept = m.y_mean - f.slope * f.x_mean;
  f.next_weight = static_cast<double>(points.size() + 1);
  f.dof = static_cast<int>(points.size()) - 2;
  if (f.dof >= 1) {
    double rss = 0;
    for (size_t i = 0; i < points.size(); ++i) {
      const double r = std::log(1 - points[i].accuracy) - f.log_error(points[i].min_steps);
      rss += static_cast<double>(i + 1) * r * r;
    }
    f.residual_var = rss / f.dof;
  }
  return f;
}

// The line minimizing the weighted squares plus prior.weight (slope + k0)^2:
// through the weighted mean point, at a slope between the evaluations' own
// and the prior's, weighed by their spread in log progress against the prior's weight.
struct Line {
  double intercept = 0, slope = 0;
};

Line anchored_line(const WeightedSums& m, const ExponentPrior& prior) {
  const double slope = (m.sxy - prior.weight * prior.exponent) / (m.sxx + prior.weight);
  return {m.y_mean - slope * m.x_mean, slope};
}

}  // namespace

double PowerLawFit::log_error(double min_steps) const { return intercept + slope * std::log(min_steps); }

double PowerLawFit::optimistic_log_error(double min_steps) const {
  if (dof < 1) throw std::logic_error("a prediction interval needs three evaluations");
  const double dx = std::log(min_steps) - x_mean;
  // An evaluation's own scatter, the line's height and its slope, as for any
  // weighted regression's prediction interval.
  const double var = residual_var * (1 / next_weight + 1 / weight_sum + dx * dx / sxx);
  return log_error(min_steps) - predict::student_t_quantile(kIntervalLevel, dof) * std::sqrt(var);
}

std::optional<double> AccuracyForecast::earliest_within_interval(double target, double horizon) const {
  if (!has_interval()) throw std::logic_error("the forecast has no interval (fewer than three evaluations)");
  const double goal = std::log(1 - target);
  const double from = std::log(last_min_steps);
  const double to = std::log(std::max(horizon, last_min_steps));
  // The optimistic edge need not fall monotonically (a rising fit whose
  // interval widens), so the first crossing is searched on a grid.
  for (int i = 1; i <= kSearchPoints; ++i) {
    const double s = std::exp(from + (to - from) * i / kSearchPoints);
    if (fit->optimistic_log_error(s) <= goal) return s;
  }
  return std::nullopt;
}

double min_steps_of_step(double global_batch, double b_noise, double floor_batch) {
  if (global_batch <= 0) return 0;
  return 1.0 / predict::steps_per_min_step(global_batch, std::max(0.0, b_noise), floor_batch);
}

std::optional<double> interpolated_crossing(const std::vector<AccuracyPoint>& points, double target) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].accuracy < target) continue;
    if (i == 0) return points[i].min_steps;
    const auto& below = points[i - 1];
    const double share = (target - below.accuracy) / (points[i].accuracy - below.accuracy);
    return below.min_steps + share * (points[i].min_steps - below.min_steps);
  }
  return std::nullopt;
}

AccuracyForecast forecast_target(const std::vector<AccuracyPoint>& points, double target,
                                 const std::optional<ExponentPrior>& prior) {
  AccuracyForecast f;
  std::vector<AccuracyPoint> usable;
  for (const auto& p : points) {
    if (p.min_steps > 0 && p.accuracy > 0 && p.accuracy < 1) usable.push_back(p);
  }
  f.points = static_cast<int>(usable.size());
  const size_t needed = prior ? 1 : 2;
  if (usable.size() < needed) {
    f.note = prior ? "no evaluation yet: no forecast yet" : "fewer than two evaluations: no forecast yet";
    return f;
  }
  f.last_min_steps = usable.back().min_steps;
  f.flattened = has_flattened(usable, target);
  const WeightedSums sums = weighted_sums(usable);
  f.fit = fit_power_law(usable, sums);
  Line line;
  if (prior) {
    line = anchored_line(sums, *prior);
    f.anchored = true;
  } else if (f.fit) {
    line = {f.fit->intercept, f.fit->slope};
  } else {
    f.note = "evaluations at one point of progress: no forecast yet";
    return f;
  }
  f.exponent = -line.slope;
  std::string note = fmt::format("error ~ s^-{:g} over {} evaluation{}", f.exponent, usable.size(),
                                 usable.size() == 1 ? "" : "s");
  if (prior) {
    note += fmt::format(" (exponent prior {:g}; the evaluations alone: {})", prior->exponent,
                        f.fit ? fmt::format("{:g}", -f.fit->slope) : std::string("none yet"));
  }
  if (f.exponent < kFlatExponent) {
    note += "; the error is not falling";
  } else {
    // log(1 - target) = intercept - k log S*
    f.target_min_steps = std::exp((line.intercept - std::log(1 - target)) / f.exponent);
  }
  if (f.flattened) note += fmt::format("; no new best over the last {} evaluations", kFlatWindow);
  f.note = note;
  return f;
}

}  // namespace tula::tune
