// The crossing's estimate: the prior and the forecast weighed by their
// spreads, and what is left of an estimate once the job has passed part of it.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "tune/target_estimate.hpp"

namespace tula::tune {
namespace {

TEST(CombineEstimates, EqualSpreadsMeetAtTheGeometricMeanWithASmallerSpread) {
  const auto c = combine_estimates({100, 0.5}, {400, 0.5});
  EXPECT_NEAR(c.median, 200, 1e-9);
  EXPECT_NEAR(c.log_sd, 0.5 / std::sqrt(2.0), 1e-12);
}

TEST(CombineEstimates, TheNarrowerEstimateWeighsMore) {
  // Precisions 1 and 4: the log mean lies a fifth of the way from the narrow one.
  const auto c = combine_estimates({100, 1.0}, {1000, 0.5});
  EXPECT_NEAR(std::log(c.median), (std::log(100.0) + 4 * std::log(1000.0)) / 5, 1e-12);
  EXPECT_NEAR(c.log_sd, 1 / std::sqrt(5.0), 1e-12);
  // A forecast from two evaluations (no interval) against the stated prior leans on the prior.
  const auto leaning = combine_estimates({1000, kForecastLogSdWithoutInterval}, {100, std::log(2.0)});
  EXPECT_LT(leaning.median, std::sqrt(1000.0 * 100.0));
}

TEST(CombineEstimates, RejectsAnEstimateWithoutAPositiveMedianOrSpread) {
  EXPECT_THROW(combine_estimates({0, 1}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(combine_estimates({1, 1}, {1, 0}), std::invalid_argument);
}

TEST(MedianBeyond, ProgressFarBelowTheEstimateLeavesItsMedian) {
  EXPECT_NEAR(median_beyond({200, 0.3}, 0), 200, 1e-12);
  EXPECT_NEAR(median_beyond({200, 0.3}, 20), 200, 1e-6);
}

TEST(MedianBeyond, ProgressAtTheMedianMovesItToTheUpperQuartile) {
  // Half the mass is ruled out: the median of the rest is the 75% quantile.
  EXPECT_NEAR(median_beyond({200, 0.3}, 200), 200 * std::exp(0.3 * 0.6744897501960817), 1e-6);
}

TEST(MedianBeyond, ProgressPastTheWholeEstimateIsTheAnswerItself) {
  const double m = median_beyond({200, 0.1}, 2000);
  EXPECT_GE(m, 2000);
  EXPECT_LT(m, 2000 * 1.01);
}

TEST(QuantileBeyond, IsTheLogNormalsQuantileOfTheMassNotRuledOut) {
  // No progress: the plain quantile; the median is median_beyond's.
  EXPECT_NEAR(quantile_beyond({200, 0.3}, 0, 0.9), 200 * std::exp(0.3 * 1.2815515655446004), 1e-6);
  EXPECT_NEAR(quantile_beyond({200, 0.3}, 150, 0.5), median_beyond({200, 0.3}, 150), 1e-12);
  // Progress at the median: the rest's 10% quantile is the whole's 55%.
  EXPECT_NEAR(quantile_beyond({200, 0.3}, 200, 0.1), 200 * std::exp(0.3 * 0.12566134685507402), 1e-6);
  // Rising with p, never below the progress made.
  double last = 0;
  for (const double p : {0.01, 0.2, 0.5, 0.8, 0.99}) {
    const double q = quantile_beyond({200, 0.3}, 250, p);
    EXPECT_GT(q, last);
    EXPECT_GE(q, 250);
    last = q;
  }
  EXPECT_THROW(quantile_beyond({200, 0.3}, 0, 1.0), std::invalid_argument);
}

TEST(ForecastLogSd, ComesFromTheOneSidedIntervalOrIsWideWithoutOne) {
  EXPECT_EQ(forecast_log_sd(300, 0), kForecastLogSdWithoutInterval);
  // An optimistic edge at half the crossing: 1.645 sd = log 2.
  EXPECT_NEAR(forecast_log_sd(300, 150), std::log(2.0) / 1.6448536269514722, 1e-12);
  // An edge at (or past) the crossing still leaves the floor.
  EXPECT_EQ(forecast_log_sd(300, 300), kForecastLogSdFloor);
  EXPECT_EQ(forecast_log_sd(300, 400), kForecastLogSdFloor);
}

TEST(AnchoredForecastLogSd, NarrowsWithTheEvaluationsAndHoldsPastTheSixth) {
  EXPECT_EQ(anchored_forecast_log_sd(1), 0.60);
  EXPECT_EQ(anchored_forecast_log_sd(2), 0.33);
  for (int n = 2; n <= 6; ++n) EXPECT_LT(anchored_forecast_log_sd(n), anchored_forecast_log_sd(n - 1)) << n;
  EXPECT_EQ(anchored_forecast_log_sd(40), anchored_forecast_log_sd(6));
  EXPECT_THROW(anchored_forecast_log_sd(0), std::invalid_argument);
}

TEST(StatedEpochsPrior, IsTwoEpochsWithinAFactorOfTwo) {
  const auto p = stated_epochs_prior();
  EXPECT_EQ(p.unit, EpochsPrior::Unit::MinEpochs);
  EXPECT_EQ(p.epochs, 2.0);
  EXPECT_NEAR(p.log_sd, std::log(2.0), 1e-12);
  EXPECT_EQ(p.jobs, 0);
}

}  // namespace
}  // namespace tula::tune
