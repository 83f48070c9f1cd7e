#include "tune/loss_forecast.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tula::tune {
namespace {

// The loss curve is fitted on bin means over the recent half of the progress:
// far enough back to see its slope, near enough that an early steep fall
// does not set it.
constexpr int kLossBins = 16;
constexpr int kMinLossBins = 4;
constexpr size_t kMinSteps = 20;
// Slopes this near zero forecast no crossing.
constexpr double kFlatSlope = 1e-3;

struct Line {
  double intercept = 0, slope = 0;
};

struct Weighted {
  double x = 0, y = 0, w = 1;
};

std::optional<Line> least_squares(const std::vector<Weighted>& points) {
  double sw = 0, sx = 0, sy = 0;
  for (const auto& p : points) {
    sw += p.w;
    sx += p.w * p.x;
    sy += p.w * p.y;
  }
  if (sw <= 0) return std::nullopt;
  const double mx = sx / sw, my = sy / sw;
  double sxx = 0, sxy = 0;
  for (const auto& p : points) {
    sxx += p.w * (p.x - mx) * (p.x - mx);
    sxy += p.w * (p.x - mx) * (p.y - my);
  }
  if (sxx <= 1e-12) return std::nullopt;
  Line line;
  line.slope = sxy / sxx;
  line.intercept = my - line.slope * mx;
  return line;
}

bool usable(const LossPoint& p) { return p.min_steps > 0 && std::isfinite(p.loss) && p.loss > 0; }

// log(loss) against log(s) over the recent half of the progress.
std::optional<Line> fit_loss_curve(const std::vector<LossPoint>& steps) {
  const double last = steps.back().min_steps;
  const double from = std::log(last / 2), to = std::log(last);
  if (!(to > from)) return std::nullopt;
  std::vector<double> loss(kLossBins, 0.0), log_s(kLossBins, 0.0), count(kLossBins, 0.0);
  for (const auto& p : steps) {
    if (!usable(p) || std::log(p.min_steps) < from) continue;
    const int bin = std::clamp(static_cast<int>((std::log(p.min_steps) - from) / (to - from) * kLossBins), 0, kLossBins - 1);
    loss[bin] += p.loss;
    log_s[bin] += std::log(p.min_steps);
    count[bin] += 1;
  }
  std::vector<Weighted> points;
  for (int b = 0; b < kLossBins; ++b) {
    if (count[b] > 0) points.push_back({log_s[b] / count[b], std::log(loss[b] / count[b]), 1});
  }
  if (static_cast<int>(points.size()) < kMinLossBins) return std::nullopt;
  return least_squares(points);
}

// log(error) against log(the training loss over the second half of the
// steps since the evaluation before), later evaluations weighted more.
std::optional<Line> fit_link(const std::vector<LossPoint>& steps, const std::vector<AccuracyPoint>& evaluations) {
  std::vector<Weighted> points;
  double previous = 0;
  for (const auto& e : evaluations) {
    if (e.min_steps <= previous || e.accuracy <= 0 || e.accuracy >= 1) continue;
    const double lo = previous + (e.min_steps - previous) / 2;
    double sum = 0, n = 0;
    for (const auto& p : steps) {
      if (usable(p) && p.min_steps > lo && p.min_steps <= e.min_steps) {
        sum += p.loss;
        n += 1;
      }
    }
    previous = e.min_steps;
    if (n == 0) continue;
    points.push_back({std::log(sum / n), std::log(1 - e.accuracy), static_cast<double>(points.size() + 1)});
  }
  if (points.size() < 2) return std::nullopt;
  return least_squares(points);
}

}  // namespace

LossForecast forecast_from_loss(const std::vector<LossPoint>& steps, const std::vector<AccuracyPoint>& evaluations,
                                double target) {
  LossForecast f;
  if (steps.size() < kMinSteps) {
    f.note = fmt::format("fewer than {} steps: no loss forecast yet", kMinSteps);
    return f;
  }
  const auto curve = fit_loss_curve(steps);
  if (!curve) {
    f.note = "too few steps over the recent half of the progress: no loss forecast yet";
    return f;
  }
  f.loss_slope = curve->slope;
  std::string note = fmt::format("training loss ~ s^{:g}", curve->slope);
  if (curve->slope > -kFlatSlope) {
    f.note = note + "; the training loss is not falling";
    return f;
  }
  const auto link = fit_link(steps, evaluations);
  if (!link) {
    f.note = note + "; fewer than two evaluations at distinct training losses: no loss forecast yet";
    return f;
  }
  f.link_slope = link->slope;
  note += fmt::format(", error ~ loss^{:g}", link->slope);
  if (link->slope < kFlatSlope) {
    note += "; the error does not fall with the training loss";
  } else {
    // log(1 - target) = alpha + beta (a + b log S*)
    const double log_loss = (std::log(1 - target) - link->intercept) / link->slope;
    f.target_min_steps = std::exp((log_loss - curve->intercept) / curve->slope);
  }
  f.note = note;
  return f;
}

std::optional<double> combined_target_min_steps(const AccuracyForecast& by_evaluations, const LossForecast& by_loss) {
  const auto& a = by_evaluations.target_min_steps;
  const auto& b = by_loss.target_min_steps;
  if (a && b) return std::sqrt(*a * *b);
  return a ? a : b;
}

}  // namespace tula::tune
