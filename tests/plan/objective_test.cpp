#include "plan/objective.hpp"

#include <gtest/gtest.h>

#include "predict/error.hpp"

namespace tula::plan {
namespace {

TEST(Objective, Parses) {
  EXPECT_EQ(parse_objective("fastest").kind, Objective::Kind::Fastest);
  EXPECT_EQ(parse_objective("cheapest").kind, Objective::Kind::Cheapest);
  EXPECT_EQ(parse_objective("knee").kind, Objective::Kind::Knee);
  const auto d = parse_objective("deadline=2.5");
  EXPECT_EQ(d.kind, Objective::Kind::Deadline);
  EXPECT_DOUBLE_EQ(d.limit, 2.5 * 3600);
  EXPECT_DOUBLE_EQ(parse_objective("deadline=90m").limit, 5400);
  EXPECT_DOUBLE_EQ(parse_objective("deadline=2h").limit, 7200);
  const auto b = parse_objective("budget=$120");
  EXPECT_EQ(b.kind, Objective::Kind::Budget);
  EXPECT_DOUBLE_EQ(b.limit, 120);
  for (const char* bad : {"fast", "deadline=", "deadline=-1", "budget=abc", "budget=5x", "deadline=0"}) {
    EXPECT_THROW(parse_objective(bad), std::invalid_argument) << bad;
  }
  EXPECT_EQ(to_string(parse_objective("deadline=2")), "deadline=2h");
}

TEST(Objective, DeadlinesAndBudgetsAreLimits) {
  EXPECT_TRUE(parse_objective("deadline=2").limited());
  EXPECT_TRUE(parse_objective("budget=50").limited());
  for (const char* text : {"fastest", "cheapest", "knee"}) EXPECT_FALSE(parse_objective(text).limited()) << text;
}

// Front: fastest first, cost falling.
const std::vector<TimeCost> kFront = {{1000, 50}, {2000, 30}, {4000, 20}, {8000, 15}};

TEST(Objective, SelectsAlongTheFront) {
  EXPECT_EQ(select_on_front(Objective::fastest(), kFront, 1), 0u);
  EXPECT_EQ(select_on_front(Objective::cheapest(), kFront, 1), 3u);
  EXPECT_EQ(select_on_front(Objective::knee(), kFront, 1), 1u);
  // Cheapest that finishes within 4000 s (1.11 h): the 4000 s one.
  EXPECT_EQ(select_on_front({Objective::Kind::Deadline, 4000}, kFront, 1), 2u);
  EXPECT_EQ(select_on_front({Objective::Kind::Deadline, 3999}, kFront, 1), 1u);
  // Fastest within $30: the 2000 s one.
  EXPECT_EQ(select_on_front(Objective::budget(30), kFront, 1), 1u);
  EXPECT_EQ(select_on_front(Objective::budget(1e9), kFront, 1), 0u);
}

TEST(Objective, InfeasibleDeadlinesAndBudgetsSayHowFarOff) {
  try {
    select_on_front({Objective::Kind::Deadline, 500}, kFront, 1);
    FAIL();
  } catch (const predict::InfeasibleError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no configuration meets the deadline"), std::string::npos);
    EXPECT_NE(m.find("2x the deadline"), std::string::npos) << m;
  }
  try {
    select_on_front(Objective::budget(10), kFront, 1);
    FAIL();
  } catch (const predict::InfeasibleError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("budget of $10.00"), std::string::npos) << m;
    EXPECT_NE(m.find("cheapest costs $15.00"), std::string::npos) << m;
  }
  EXPECT_THROW(select_on_front(Objective::fastest(), {}, 0), predict::InfeasibleError);
}

}  // namespace
}  // namespace tula::plan
