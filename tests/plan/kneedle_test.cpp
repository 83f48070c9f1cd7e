#include "plan/kneedle.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tula::plan {
namespace {

std::vector<double> grid(double a, double b, int n) {
  std::vector<double> x;
  for (int i = 0; i < n; ++i) x.push_back(a + (b - a) * i / (n - 1));
  return x;
}

// For y = 1/x on [a, b] the normalized difference curve peaks where the
// slope of the normalized curve is -1: x = sqrt(a b), the geometric mean.
TEST(Kneedle, HyperbolaKneeAtTheGeometricMean) {
  const auto x = grid(1, 100, 2000);
  std::vector<double> y;
  for (double v : x) y.push_back(1 / v);
  const auto r = kneedle(x, y, Curve::Convex, Direction::Decreasing);
  ASSERT_TRUE(r.knee.has_value());
  EXPECT_NEAR(x[*r.knee], 10, 0.1);
}

// y = log x on [a, b]: the knee is where 1/x = (ln b - ln a)/(b - a),
// x = (b - a) / ln(b / a), the logarithmic mean.
TEST(Kneedle, LogarithmKneeAtTheLogarithmicMean) {
  const auto x = grid(1, std::exp(4.0), 3000);
  std::vector<double> y;
  for (double v : x) y.push_back(std::log(v));
  const auto r = kneedle(x, y, Curve::Concave, Direction::Increasing);
  ASSERT_TRUE(r.knee.has_value());
  EXPECT_NEAR(x[*r.knee], (std::exp(4.0) - 1) / 4, 0.05);
}

TEST(Kneedle, ConvexIncreasingAndConcaveDecreasing) {
  const auto x = grid(0, 1, 1001);
  std::vector<double> sq, fall;
  for (double v : x) sq.push_back(v * v), fall.push_back(1 - v * v);
  const auto a = kneedle(x, sq, Curve::Convex, Direction::Increasing);
  const auto b = kneedle(x, fall, Curve::Concave, Direction::Decreasing);
  ASSERT_TRUE(a.knee && b.knee);
  EXPECT_NEAR(x[*a.knee], 0.5, 0.002);
  EXPECT_NEAR(x[*b.knee], 0.5, 0.002);
}

// Satopaa et al.'s threshold: a bump smaller than S times the mean x spacing
// is not a knee; a straight line has none.
TEST(Kneedle, NoKneeOnAStraightLineOrTooFewPoints) {
  const auto x = grid(0, 1, 50);
  EXPECT_FALSE(kneedle(x, x, Curve::Concave, Direction::Increasing).knee.has_value());
  EXPECT_FALSE(kneedle({1, 2}, {2, 1}, Curve::Convex, Direction::Decreasing).knee.has_value());
  EXPECT_THROW(kneedle({1, 1, 2}, {1, 2, 3}, Curve::Convex, Direction::Decreasing), std::invalid_argument);
}

TEST(Kneedle, LogScaleMovesTheKneeOfAPowerLaw) {
  // On log axes y = 1/x is a straight line: no knee there.
  const auto x = grid(1, 100, 500);
  std::vector<double> y;
  for (double v : x) y.push_back(1 / v);
  const auto r = kneedle(x, y, Curve::Convex, Direction::Decreasing, 1.0, Scale::Log);
  EXPECT_FALSE(r.knee.has_value());
}

}  // namespace
}  // namespace tula::plan
