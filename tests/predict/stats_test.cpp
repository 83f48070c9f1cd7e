#include "predict/stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "predict/error.hpp"

namespace tula::predict {
namespace {

TEST(Stats, LeastSquaresIsExactOnALine) {
  Eigen::MatrixXd x(4, 2);
  Eigen::VectorXd y(4);
  for (int i = 0; i < 4; ++i) {
    x(i, 0) = 1;
    x(i, 1) = i + 1;
    y(i) = 2 + 3 * (i + 1);
  }
  const auto fit = weighted_least_squares(x, y, Eigen::VectorXd::Ones(4), {"a", "c"}, "test");
  EXPECT_NEAR(fit["a"], 2, 1e-12);
  EXPECT_NEAR(fit["c"], 3, 1e-12);
  EXPECT_EQ(fit.dof, 2);
  EXPECT_NEAR(fit.se("c"), 0, 1e-9);
}

TEST(Stats, RankDeficientDesignIsAFitErrorNamingTheSamples) {
  Eigen::MatrixXd x(3, 2);
  x << 1, 4, 1, 4, 1, 4;  // every point at the same batch
  Eigen::VectorXd y(3);
  y << 1, 1.1, 0.9;
  try {
    weighted_least_squares(x, y, Eigen::VectorXd::Ones(3), {"a", "c"}, "samples.compute");
    FAIL() << "expected FitError";
  } catch (const FitError& e) {
    EXPECT_NE(std::string(e.what()).find("samples.compute"), std::string::npos);
  }
}

TEST(Stats, StudentTQuantilesMatchTables) {
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.571, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042, 1e-3);
  EXPECT_NEAR(student_t_quantile(0.025, 10), -2.228, 1e-3);
  EXPECT_NEAR(normal_quantile(0.975), 1.95996, 1e-4);
  EXPECT_NEAR(student_t_cdf(0, 3), 0.5, 1e-12);
}

// Reference values to 16 digits from an arbitrary-precision evaluation at the
// double nearest each p: in the tails, rounding p to a double moves the
// quantile by more than these tolerances, which ask for near double precision.
TEST(Stats, QuantilesMatchReferenceValuesToNearDoublePrecision) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_quantile(0.999999), 4.753424308817088, 1e-13);
  EXPECT_NEAR(normal_quantile(1e-12), -7.034483825301132, 1e-13);
  EXPECT_EQ(normal_quantile(0.5), 0.0);
  EXPECT_NEAR(student_t_quantile(0.975, 1), 12.70620473617469, 1e-12);
  EXPECT_NEAR(student_t_quantile(0.975, 2), 4.302652729749462, 1e-13);
  EXPECT_NEAR(student_t_quantile(0.975, 5), 2.570581835636315, 1e-13);
  EXPECT_NEAR(student_t_quantile(0.975, 30), 2.042272456301238, 1e-13);
  // Large but finite dof is still a t, slightly wider than the normal (1.959963984540054).
  EXPECT_NEAR(student_t_quantile(0.975, 1e6), 1.959966356814107, 1e-13);
  EXPECT_NEAR(student_t_quantile(0.975, 2e6), 1.959965170676375, 1e-13);
  EXPECT_NEAR(student_t_cdf(1, std::numeric_limits<double>::infinity()), 0.8413447460685429, 1e-15);
  for (const double dof : {1.0, 2.5, 7.0, 100.0}) {
    for (const double p : {1e-6, 0.1, 0.9, 0.999}) {
      EXPECT_NEAR(student_t_cdf(student_t_quantile(p, dof), dof), p, 1e-12 * p) << "dof " << dof << ", p " << p;
    }
  }
}

TEST(Stats, QuantilesRejectProbabilitiesOutsideTheOpenUnitInterval) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const double p : {0.0, 1.0, -0.1, 1.5, nan}) {
    EXPECT_THROW(normal_quantile(p), std::invalid_argument) << p;
    EXPECT_THROW(student_t_quantile(p, 5), std::invalid_argument) << p;
    EXPECT_THROW(student_t_quantile(p, 0), std::invalid_argument) << p;
  }
}

TEST(Stats, DegenerateDegreesOfFreedomGiveTheNormalQuantileAndNoCdf) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const double dof : {0.0, -3.0, inf, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_EQ(student_t_quantile(0.975, dof), normal_quantile(0.975)) << dof;
  }
  EXPECT_TRUE(std::isnan(student_t_cdf(1, 0)));
  EXPECT_TRUE(std::isnan(student_t_cdf(1, -2)));
  EXPECT_TRUE(std::isnan(student_t_cdf(std::numeric_limits<double>::quiet_NaN(), 3)));
  EXPECT_EQ(student_t_cdf(inf, 3), 1.0);
  EXPECT_EQ(student_t_cdf(-inf, 3), 0.0);
}

TEST(Stats, ParameterDrawsHaveTheFittedMeanAndCovariance) {
  ParamBlock b;
  b.names = {"x", "y"};
  b.value = Eigen::Vector2d(1.0, -2.0);
  b.cov.resize(2, 2);
  b.cov << 0.04, 0.01, 0.01, 0.09;
  b.dof = 1000;  // effectively normal
  std::mt19937_64 rng(7);
  const auto d = draw_parameters(b, 20000, rng);
  const Eigen::RowVector2d mean = d.colwise().mean();
  EXPECT_NEAR(mean(0), 1.0, 0.01);
  EXPECT_NEAR(mean(1), -2.0, 0.01);
  const Eigen::MatrixXd centred = d.rowwise() - mean;
  const Eigen::Matrix2d cov = centred.transpose() * centred / (d.rows() - 1);
  EXPECT_NEAR(cov(0, 0), 0.04, 0.003);
  EXPECT_NEAR(cov(0, 1), 0.01, 0.003);
  EXPECT_NEAR(cov(1, 1), 0.09, 0.005);
}

TEST(Stats, ParamBlockJsonRoundTrips) {
  ParamBlock b;
  b.names = {"alpha", "inv_bw"};
  b.value = Eigen::Vector2d(5e-5, 1e-9);
  b.cov.resize(2, 2);
  b.cov << 1e-12, -1e-18, -1e-18, 1e-22;
  b.dof = 7;
  b.points = 9;
  b.residual_sd = 0.02;
  const auto back = param_block_from_json(to_json(b), "fitted.x");
  EXPECT_EQ(back.names, b.names);
  EXPECT_DOUBLE_EQ(back.value(1), b.value(1));
  EXPECT_DOUBLE_EQ(back.cov(0, 1), b.cov(0, 1));
  EXPECT_EQ(back.dof, 7);
  EXPECT_THROW(param_block_from_json(nlohmann::json{{"names", {"a"}}}, "fitted.x"), ProfileError);
}

}  // namespace
}  // namespace tula::predict
