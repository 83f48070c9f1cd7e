#include "plan/pareto.hpp"

#include <gtest/gtest.h>

#include <random>

namespace tula::plan {
namespace {

TEST(Pareto, HandMadePoints) {
  //   0: (1, 10)  front (fastest)
  //   1: (2, 6)   front
  //   2: (3, 7)   dominated by 1
  //   3: (4, 3)   front
  //   4: (4, 5)   dominated by 3 (same time, dearer)
  //   5: (6, 3)   dominated by 3 (same cost, slower)
  //   6: (8, 1)   front (cheapest)
  //   7: (2, 6)   equal to 1: only the first is kept
  const std::vector<TimeCost> p = {{1, 10}, {2, 6}, {3, 7}, {4, 3}, {4, 5}, {6, 3}, {8, 1}, {2, 6}};
  EXPECT_EQ(pareto_front(p), (std::vector<size_t>{0, 1, 3, 6}));
  EXPECT_TRUE(pareto_front({}).empty());
  EXPECT_EQ(pareto_front({{5, 5}}), std::vector<size_t>{0});
}

TEST(Pareto, MatchesBruteForceOnRandomPoints) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<TimeCost> p;
  for (int i = 0; i < 400; ++i) {
    const double t = u(rng);
    p.push_back({t, 1 / (t + 0.1) + u(rng)});
  }
  const auto front = pareto_front(p);
  std::vector<bool> on(p.size(), false);
  for (size_t i : front) on[i] = true;
  for (size_t i = 0; i < p.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < p.size(); ++j) dominated |= dominates(p[j], p[i]);
    EXPECT_EQ(on[i], !dominated) << i;
  }
  for (size_t i = 1; i < front.size(); ++i) {
    EXPECT_LT(p[front[i - 1]].time, p[front[i]].time);
    EXPECT_GT(p[front[i - 1]].cost, p[front[i]].cost);
  }
}

}  // namespace
}  // namespace tula::plan
