#include "tune/accuracy_forecast.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tula::tune {
namespace {

// No new best by this much over the last kPlateauWindow evaluations, below the target, is a plateau.
constexpr double kPlateauGain = 0.002;
constexpr size_t kPlateauWindow = 4;
// An exponent this small means the error barely falls with more steps.
constexpr double kFlatExponent = 0.02;
constexpr size_t kMinPointsFlat = 3;

}  // namespace

double min_steps_of_step(double global_batch, double b_noise) {
  if (global_batch <= 0) return 0;
  return 1.0 / (1.0 + std::max(0.0, b_noise) / global_batch);
}

AccuracyForecast forecast_target(const std::vector<AccuracyPoint>& points, double target) {
  AccuracyForecast f;
  std::vector<AccuracyPoint> usable;
  for (const auto& p : points) {
    if (p.min_steps > 0 && p.accuracy > 0 && p.accuracy < 1) usable.push_back(p);
  }
  f.points = static_cast<int>(usable.size());
  if (usable.size() < 2) {
    f.note = "fewer than two evaluations: no forecast yet";
    return f;
  }
  // Test accuracy at a constant rate is noisy (points apart between
  // evaluations), so a plateau is no new best over the last kPlateauWindow
  // evaluations, not a small gain between two.
  if (usable.size() >= 2 * kPlateauWindow - 2) {
    double before = 0, recent = 0;
    for (size_t i = 0; i < usable.size(); ++i) {
      (i + kPlateauWindow < usable.size() ? before : recent) =
          std::max(i + kPlateauWindow < usable.size() ? before : recent, usable[i].accuracy);
    }
    if (recent < before + kPlateauGain && recent < target) f.plateau = true;
  }
  // Weighted least squares of log(error) on log(steps); weights grow with
  // the evaluation's index so the curve near the present decides.
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < usable.size(); ++i) {
    const double w = static_cast<double>(i + 1);
    const double x = std::log(usable[i].min_steps), y = std::log(1 - usable[i].accuracy);
    sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
  }
  const double det = sw * sxx - sx * sx;
  if (det <= 1e-12) {
    f.note = "evaluations at one point of progress: no forecast yet";
    return f;
  }
  const double slope = (sw * sxy - sx * sy) / det;
  const double intercept = (sy - slope * sx) / sw;
  f.exponent = -slope;
  std::ostringstream note;
  note << "test error ~ s^-" << f.exponent << " over " << usable.size() << " evaluations";
  if (f.exponent < kFlatExponent) {
    // Two evaluations are too few to call a plateau: one noisy point decides.
    f.plateau = f.plateau || (usable.size() >= kMinPointsFlat && usable.back().accuracy < target);
    note << "; the error is not falling";
    f.note = note.str();
    return f;
  }
  // log(1 - target) = intercept - k log S*
  f.target_min_steps = std::exp((intercept - std::log(1 - target)) / f.exponent);
  if (f.plateau) note << "; no new best over the last " << kPlateauWindow << " evaluations";
  f.note = note.str();
  return f;
}

}  // namespace tula::tune
