// Where the target's crossing lies, as an estimate with its own spread: the
// prior before the job has an accuracy curve, the forecast once it has one,
// and the two weighed by how much each knows.
//
// Both are log-normal in the crossing's progress S* (minimum steps): the
// forecasts' errors and the spread of the epochs a setup needs over seeds
// are both multiplicative. Two independent log-normal estimates combine by
// precision in log space (the product of their densities), so a forecast
// from two evaluations, whose crossing can move by a factor of ten with the
// next one, leans on the prior, and a forecast with a tight interval stands
// on its own. A crossing the job has already passed without reaching the
// target is ruled out: the estimate is the median of what remains beyond the
// progress made.
// No LibTorch here.
#pragma once
#include <array>
#include <string>

namespace tula::tune {

struct LogNormalEstimate {
  double median = 0;  // > 0
  double log_sd = 0;  // > 0: the sd of log(S*)
};

// The product of two log-normal densities, normalized: precision-weighted
// mean of the logs, precisions added. Throws std::invalid_argument for a
// non-positive median or log_sd.
LogNormalEstimate combine_estimates(const LogNormalEstimate& a, const LogNormalEstimate& b);

// The median of `estimate` given that S* > `done` (done >= 0): the estimate's
// own median while done lies well below it, rising above done as done passes it.
double median_beyond(const LogNormalEstimate& estimate, double done);

// The quantile `p` (0 < p < 1) of `estimate` given that S* > `done`; at p = 0.5, median_beyond.
double quantile_beyond(const LogNormalEstimate& estimate, double done, double p);

// What a job expects of the examples its target needs, before its own curve
// says, in one of two units:
//   MinEpochs        E_min, the examples an unlimited batch needs, in epochs
//                    (the stated prior: the statistical model's own quantity);
//   ReferenceEpochs  the epochs a run at the reference batch needs (what a
//                    finished job measures, so a job history keeps it: a job
//                    at that batch is planned with exactly its epochs).
struct EpochsPrior {
  enum class Unit { MinEpochs, ReferenceEpochs };
  Unit unit = Unit::MinEpochs;
  double epochs = 2.0;       // the median
  double log_sd = 0.69;      // the sd of log(epochs)
  int jobs = 0;              // earlier jobs it comes from (0: the stated prior)
  std::string source;        // for the report
};

// The stated prior: E_min of 2 epochs, within a factor of two (log sd ln 2).
// On the zoo's cases it was 1.2-1.9x too many for small_cnn to 83% and about
// right for LeNet-5 to 84% (docs/notebook/round-03.md, "The oracle, round 3").
EpochsPrior stated_epochs_prior();

// The spread of a forecast's crossing: from the evaluations' one-sided 95%
// interval (the earliest progress at which the target lies within it) where
// there is one (0 where there is none: kForecastLogSdWithoutInterval), at
// least kForecastLogSdFloor.
inline constexpr double kForecastLogSdWithoutInterval = 1.0;
inline constexpr double kForecastLogSdFloor = 0.05;
double forecast_log_sd(double forecast_min_steps, double earliest_min_steps);

// The spread of a crossing forecast with the exponent prior
// (accuracy_forecast.hpp, kRecordedCurvesExponentPrior) after `evaluations`
// (>= 1): the rms of its log error after that many evaluations on the
// recorded curves the prior was chosen on; past six, the sixth's. The
// evaluations' interval belongs to the fit without the prior, so it does not
// measure this forecast's spread.
inline constexpr std::array<double, 6> kAnchoredForecastLogSd{0.60, 0.33, 0.28, 0.21, 0.19, 0.17};
double anchored_forecast_log_sd(int evaluations);

}  // namespace tula::tune
