#include "tune/target_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "predict/stats.hpp"

namespace tula::tune {
namespace {

void check(const LogNormalEstimate& e, const char* which) {
  if (!(e.median > 0) || !(e.log_sd > 0)) {
    throw std::invalid_argument(std::string("log-normal estimate ") + which + ": median and log sd must be positive");
  }
}

}  // namespace

LogNormalEstimate combine_estimates(const LogNormalEstimate& a, const LogNormalEstimate& b) {
  check(a, "a");
  check(b, "b");
  const double pa = 1 / (a.log_sd * a.log_sd);
  const double pb = 1 / (b.log_sd * b.log_sd);
  const double mean = (pa * std::log(a.median) + pb * std::log(b.median)) / (pa + pb);
  return {std::exp(mean), 1 / std::sqrt(pa + pb)};
}

double median_beyond(const LogNormalEstimate& estimate, double done) { return quantile_beyond(estimate, done, 0.5); }

double quantile_beyond(const LogNormalEstimate& estimate, double done, double p) {
  check(estimate, "");
  if (!(p > 0 && p < 1)) throw std::invalid_argument("quantile_beyond: p must be in (0, 1)");
  const double mu = std::log(estimate.median);
  if (!(done > 0)) return std::exp(mu + estimate.log_sd * predict::normal_quantile(p));
  const double below = predict::normal_cdf((std::log(done) - mu) / estimate.log_sd);  // mass already ruled out
  // The quantile of the rest sits that far through the mass above done; far
  // in the tail it runs out of precision, and done itself is the answer.
  const double at = below + p * (1 - below);
  if (!(at < 1 - 1e-12)) return done;
  return std::max(done, std::exp(mu + estimate.log_sd * predict::normal_quantile(at)));
}

EpochsPrior stated_epochs_prior() {
  return {EpochsPrior::Unit::MinEpochs, 2.0, std::log(2.0), 0, "the stated prior (E_min 2 epochs)"};
}

double forecast_log_sd(double forecast_min_steps, double earliest_min_steps) {
  if (!(forecast_min_steps > 0) || !(earliest_min_steps > 0)) return kForecastLogSdWithoutInterval;
  // The one-sided 95% edge lies 1.645 sd below the median; an edge at the
  // median itself (a crossing due now) still leaves the evaluations' noise.
  const double spread = std::log(forecast_min_steps / std::min(earliest_min_steps, forecast_min_steps));
  return std::max(kForecastLogSdFloor, spread / 1.6448536269514722);
}

double anchored_forecast_log_sd(int evaluations) {
  if (evaluations < 1) throw std::invalid_argument("anchored_forecast_log_sd: needs an evaluation");
  return kAnchoredForecastLogSd[std::min<size_t>(static_cast<size_t>(evaluations), kAnchoredForecastLogSd.size()) - 1];
}

}  // namespace tula::tune
