#include "predict/noise_growth.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "predict/error.hpp"
#include "predict/noise_scale.hpp"

namespace tula::predict {

NoiseGrowth measured_noise_growth() {
  // bench/results/noise_growth/fits.jsonl (progress, run intercepts) and
  // errors.jsonl (law progress-intercepts: plan_target and refit).
  NoiseGrowth g;
  g.exponent = 0.788;
  g.exponent_se = 0.091;
  g.plan_median_error = 0.817;
  g.plan_max_error = 1.737;
  g.refit_median_error = 0.217;
  g.refit_max_error = 1.185;
  return g;
}

namespace {

void check_read(const NoiseGrowth& growth, const NoiseRead& read) {
  if (!(read.b_noise > 0)) throw std::invalid_argument("noise growth: the read's B_noise must be positive");
  if (growth.grows() && !(read.progress > 0)) {
    throw std::invalid_argument("noise growth: the read's progress (minimum steps) must be positive");
  }
}

// The integral of B_noise over progress [0, s].
double examples_to(const NoiseGrowth& growth, const NoiseRead& read, double s) {
  const double a = growth.exponent;
  return read.b_noise * std::pow(s / read.progress, a) * s / (a + 1);
}

}  // namespace

double grown_b_noise(const NoiseGrowth& growth, const NoiseRead& read, double progress) {
  check_read(growth, read);
  if (!growth.grows()) return read.b_noise;
  return read.b_noise * std::pow(std::max(progress, 0.0) / read.progress, growth.exponent);
}

double mean_b_noise(const NoiseGrowth& growth, const NoiseRead& read, double from, double to) {
  check_read(growth, read);
  if (from < 0) throw std::invalid_argument("noise growth: progress cannot be negative");
  if (!growth.grows()) return read.b_noise;
  // Relative to the range: below this the difference of the two integrals
  // loses its digits, and the value at `from` is the mean.
  if (!(to - from > 1e-9 * std::max(1.0, to))) return grown_b_noise(growth, read, from);
  return (examples_to(growth, read, to) - examples_to(growth, read, from)) / (to - from);
}

double progress_for_examples(const NoiseGrowth& growth, const NoiseRead& read, double examples) {
  check_read(growth, read);
  if (!(examples > 0)) return 0;
  if (!growth.grows()) return examples / read.b_noise;
  // examples = B0 s^(a+1) / ((a+1) s0^a)
  const double a = growth.exponent;
  return std::pow(examples * (a + 1) * std::pow(read.progress, a) / read.b_noise, 1 / (a + 1));
}

double progress_for_steps(const NoiseGrowth& growth, const NoiseRead& read, double steps, double batch) {
  check_read(growth, read);
  if (!(steps > 0)) return 0;
  const auto steps_to = [&](double s) { return s + mean_b_noise(growth, read, 0, s) * s / batch; };
  double lo = 0, hi = steps;  // steps_to(s) >= s
  for (int i = 0; i < 100 && hi - lo > 1e-9 * steps; ++i) {
    const double mid = (lo + hi) / 2;
    (steps_to(mid) < steps ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

constexpr int64_t kShortestWindow = 8;

// Stretches of consecutive samples at one global batch. A single short step
// (an epoch's last, when the batch does not divide the training set) after
// steps at the stretch's batch, and before more of them or at the end, stays
// in the stretch; a step number that does not grow starts a new run.
std::vector<std::vector<NoiseSample>> stretches(const std::vector<NoiseSample>& samples) {
  std::vector<std::vector<NoiseSample>> out;
  for (size_t i = 0; i < samples.size(); ++i) {
    const auto& s = samples[i];
    bool same = false;
    if (!out.empty() && s.step > out.back().back().step) {
      const int64_t batch = out.back().front().global_batch;
      const bool last_or_back = i + 1 == samples.size() || samples[i + 1].global_batch == batch;
      same = s.global_batch == batch || (s.global_batch < batch && last_or_back);
    }
    if (same) {
      out.back().push_back(s);
    } else {
      out.push_back({s});
    }
  }
  return out;
}

NoiseWindow window_of(const std::vector<NoiseSample>& part, int64_t batch) {
  NoiseWindow w;
  w.steps = static_cast<int64_t>(part.size());
  w.global_batch = batch;
  double step = 0;
  for (const auto& s : part) {
    double g2 = 0, trace = 0;
    step_estimates(s, g2, trace);
    w.g2 += g2;
    w.trace += trace;
    step += static_cast<double>(s.step);
  }
  const double n = static_cast<double>(part.size());
  w.g2 /= n;
  w.trace /= n;
  w.mean_step = step / n;
  if (w.g2 > 0 && w.trace > 0) w.b_noise = w.trace / w.g2;
  return w;
}

// Minimum steps at each window's centre (the mean over its steps of the count
// after each), each window counted at its own B_noise.
void add_progress(std::vector<NoiseWindow>& windows) {
  double done = 0, last = 0;
  for (auto& w : windows) {
    if (w.b_noise > 0) last = w.b_noise;
    const double per_step = 1 / (1 + last / static_cast<double>(w.global_batch));
    w.progress = done + per_step * static_cast<double>(w.steps + 1) / 2;
    done += per_step * static_cast<double>(w.steps);
  }
}

}  // namespace

std::vector<NoiseWindow> noise_windows(const std::vector<NoiseSample>& samples, int64_t window_steps) {
  if (window_steps < 1) throw std::invalid_argument("noise windows: window_steps must be at least 1");
  std::vector<NoiseWindow> out;
  for (const auto& stretch : stretches(samples)) {
    const auto n = static_cast<int64_t>(stretch.size());
    const int64_t full = n / window_steps;
    if (full == 0 && n < kShortestWindow) continue;
    const int64_t count = std::max<int64_t>(1, full);
    for (int64_t i = 0; i < count; ++i) {
      const auto lo = stretch.begin() + i * window_steps;
      const auto hi = i + 1 < count ? lo + window_steps : stretch.end();
      out.push_back(window_of(std::vector<NoiseSample>(lo, hi), stretch.front().global_batch));
    }
  }
  add_progress(out);
  return out;
}

GrowthFit fit_noise_growth(const std::vector<NoiseWindow>& windows) {
  std::vector<double> x, y, w;
  for (const auto& win : windows) {
    if (!(win.b_noise > 0) || !(win.progress > 0)) continue;
    x.push_back(std::log(win.progress));
    y.push_back(std::log(win.b_noise));
    w.push_back(static_cast<double>(win.steps));
  }
  const size_t n = x.size();
  if (n < 3) {
    throw FitError(fmt::format("noise growth: {} windows with a B_noise; at least 3 are needed", n));
  }
  double wsum = 0;
  for (double v : w) wsum += v;
  for (double& v : w) v *= static_cast<double>(n) / wsum;  // mean weight 1
  double xm = 0, ym = 0;
  for (size_t i = 0; i < n; ++i) xm += w[i] * x[i], ym += w[i] * y[i];
  xm /= static_cast<double>(n);
  ym /= static_cast<double>(n);
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < n; ++i) sxx += w[i] * (x[i] - xm) * (x[i] - xm), sxy += w[i] * (x[i] - xm) * (y[i] - ym);
  if (!(sxx > 0)) throw FitError("noise growth: every window is at the same progress");
  GrowthFit f;
  f.exponent = sxy / sxx;
  double ss = 0;
  for (size_t i = 0; i < n; ++i) {
    const double r = y[i] - ym - f.exponent * (x[i] - xm);
    ss += w[i] * r * r;
  }
  f.se = std::sqrt(ss / static_cast<double>(n - 2) / sxx);
  f.windows = static_cast<int>(n);
  return f;
}

}  // namespace tula::predict
