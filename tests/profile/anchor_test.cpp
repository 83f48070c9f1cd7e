// The anchor check with injected timings: which grid is kept, when the grid
// is measured again, and what the profile's measurement section says.
#include "profile/anchor.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "common/stopwatch.hpp"

namespace tula::profile {
namespace {

// Anchors that take the given seconds in turn; the grid measurements it was
// asked for, by attempt.
struct Script {
  std::deque<double> anchors;
  std::vector<int> measured;
  std::vector<std::string> log;
  std::string refuse;  // what may_remeasure answers

  AnchoredSteps steps() {
    AnchoredSteps s;
    s.time_anchor = [this] {
      EXPECT_FALSE(anchors.empty()) << "an anchor more than the script has";
      const double v = anchors.empty() ? 1.0 : anchors.front();
      if (!anchors.empty()) anchors.pop_front();
      return v;
    };
    s.measure = [this](int attempt) { measured.push_back(attempt); };
    s.may_remeasure = [this] { return refuse; };
    return s;
  }
  AnchorReport run(AnchorOptions o = {}) {
    return run_anchored(32, steps(), o, [this](const std::string& line) { log.push_back(line); });
  }
};

TEST(Anchor, DisagreementIsSymmetricAndRelative) {
  EXPECT_DOUBLE_EQ(disagreement(1.0, 1.0), 0.0);
  EXPECT_NEAR(disagreement(1.0, 1.25), 0.25, 1e-12);
  EXPECT_NEAR(disagreement(1.25, 1.0), 0.25, 1e-12);
  EXPECT_FALSE(anchors_disagree(1.0, 1.09, 0.10));
  EXPECT_FALSE(anchors_disagree(1.09, 1.0, 0.10));
  EXPECT_TRUE(anchors_disagree(1.0, 1.11, 0.10));
  EXPECT_TRUE(anchors_disagree(2.0, 1.0, 0.10)) << "a slow start counts like a slow end";
  EXPECT_DOUBLE_EQ(kAnchorThreshold, 0.10);
}

TEST(Anchor, AgreeingAnchorsMeasureTheGridOnce) {
  Script s;
  s.anchors = {0.100, 0.104};
  const auto r = s.run();
  EXPECT_EQ(s.measured, std::vector<int>{0});
  EXPECT_FALSE(r.remeasured);
  EXPECT_EQ(r.kept, 0);
  EXPECT_TRUE(r.warning.empty()) << r.warning;
  EXPECT_DOUBLE_EQ(r.start_s(), 0.100);
  EXPECT_DOUBLE_EQ(r.end_s(), 0.104);
  EXPECT_NEAR(r.ratio(), 1.04, 1e-12);
  EXPECT_EQ(s.log.size(), 2u) << "one line per anchor";

  const auto j = r.to_json();
  EXPECT_EQ(j["batch"], 32);
  EXPECT_DOUBLE_EQ(j["start_s"].get<double>(), 0.100);
  EXPECT_DOUBLE_EQ(j["end_s"].get<double>(), 0.104);
  EXPECT_NEAR(j["ratio"].get<double>(), 1.04, 1e-12);
  EXPECT_EQ(j["remeasured"], false);
  EXPECT_EQ(j["warning"], "");
  EXPECT_EQ(j["anchors_s"].size(), 2u);
}

TEST(Anchor, ADriftMeasuresAgainAndKeepsTheSettledSecondGrid) {
  // Slow at the start (a busy stretch), fast ever since.
  Script s;
  s.anchors = {0.200, 0.100, 0.102};
  const auto r = s.run();
  EXPECT_EQ(s.measured, (std::vector<int>{0, 1}));
  EXPECT_TRUE(r.remeasured);
  EXPECT_EQ(r.kept, 1) << "the grid taken while the machine held still";
  EXPECT_TRUE(r.warning.empty()) << r.warning;
  EXPECT_DOUBLE_EQ(r.start_s(), 0.100);
  EXPECT_DOUBLE_EQ(r.end_s(), 0.102);
  const auto j = r.to_json();
  EXPECT_EQ(j["remeasured"], true);
  EXPECT_EQ(j["kept"], "second");
  EXPECT_EQ(j["anchors_s"], (std::vector<double>{0.200, 0.100, 0.102}));
}

TEST(Anchor, AFirstGridSteadierThanTheSecondIsKept) {
  // Barely over the threshold the first time, then a large drift.
  Script s;
  s.anchors = {0.100, 0.112, 0.250};
  const auto r = s.run();
  EXPECT_TRUE(r.remeasured);
  EXPECT_EQ(r.kept, 0);
  EXPECT_DOUBLE_EQ(r.start_s(), 0.100);
  EXPECT_DOUBLE_EQ(r.end_s(), 0.112);
  EXPECT_NE(r.warning.find("kept drifting"), std::string::npos) << r.warning;
  EXPECT_NE(r.warning.find("kept the first grid"), std::string::npos) << r.warning;
}

TEST(Anchor, AStillDriftingMachineKeepsTheProfileButWarns) {
  Script s;
  s.anchors = {0.100, 0.150, 0.200};  // 50%, then 33%: the second is steadier, still over
  const auto r = s.run();
  EXPECT_TRUE(r.remeasured);
  EXPECT_EQ(r.kept, 1);
  EXPECT_FALSE(r.warning.empty());
  EXPECT_EQ(r.to_json()["warning"], r.warning);
  EXPECT_NE(r.warning.find("33.3%"), std::string::npos) << r.warning;
}

TEST(Anchor, ARefusedRemeasurementWarnsWithItsReason) {
  Script s;
  s.anchors = {0.100, 0.200};
  s.refuse = "the time budget";
  const auto r = s.run();
  EXPECT_EQ(s.measured, std::vector<int>{0});
  EXPECT_FALSE(r.remeasured);
  EXPECT_EQ(r.kept, 0);
  EXPECT_EQ(r.remeasure_skipped, "the time budget");
  EXPECT_NE(r.warning.find("not re-measured: the time budget"), std::string::npos) << r.warning;
  EXPECT_DOUBLE_EQ(r.ratio(), 2.0);
}

TEST(Anchor, TheThresholdIsAnOption) {
  Script s;
  s.anchors = {0.100, 0.104, 0.104};
  AnchorOptions tight;
  tight.threshold = 0.01;
  const auto r = s.run(tight);
  EXPECT_TRUE(r.remeasured);
  EXPECT_EQ(r.kept, 1);
  EXPECT_TRUE(r.warning.empty()) << r.warning;
  EXPECT_DOUBLE_EQ(r.to_json()["threshold"].get<double>(), 0.01);
  AnchorOptions none;
  none.threshold = 0;
  EXPECT_THROW(run_anchored(32, s.steps(), none, nullptr), std::invalid_argument);
}

// The warm-up runs its steps and lasts its seconds, whichever is more.
TEST(AnchorWarmUp, RunsTheStepsAndLastsTheSecondsWhicheverIsMore) {
  AnchorOptions o;
  o.warmup = 3;
  o.warmup_s = 0;
  int steps = 0;
  warm_up([&steps] { ++steps; }, o);
  EXPECT_EQ(steps, 3) << "no seconds asked: exactly the steps";

  o.warmup = 1;
  o.warmup_s = 0.05;
  steps = 0;
  const auto start = common::Clock::now();
  warm_up([&steps] { ++steps; }, o);
  EXPECT_GE(common::since(start), 0.05) << "returned before its seconds passed";
  EXPECT_GT(steps, 1) << "instant steps repeat until the seconds pass";
}

}  // namespace
}  // namespace tula::profile
