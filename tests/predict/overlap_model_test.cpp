#include "predict/overlap_model.hpp"

#include <gtest/gtest.h>

#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

TEST(Overlap, PNormSpansSumToMax) {
  EXPECT_DOUBLE_EQ(OverlapModel::combine(3, 4, 1), 7);
  EXPECT_NEAR(OverlapModel::combine(3, 4, 2), 5, 1e-12);
  EXPECT_NEAR(OverlapModel::combine(3, 4, 200), 4, 0.02);
  EXPECT_EQ(OverlapModel::combine(3, 0, 2), 3);
  EXPECT_NEAR(OverlapModel::combine(1e200, 1e200, 2), std::sqrt(2.0) * 1e200, 1e188);  // no overflow
}

// The last bucket starts when backward ends: whatever p, its allreduce is
// waited for, all of the allreduce where one bucket holds the gradient.
TEST(Overlap, TheLastBucketIsNeverHidden) {
  EXPECT_DOUBLE_EQ(OverlapModel::step(3, 4, 4, kMaxOverlapP), 7);
  EXPECT_DOUBLE_EQ(OverlapModel::step(10, 1, 0.1, kMaxOverlapP), 10.1);
  EXPECT_DOUBLE_EQ(OverlapModel::step(3, 4, 0.1, 2), OverlapModel::combine(3, 4, 2));
  EXPECT_DOUBLE_EQ(OverlapModel::step(3, 0, 0, 2), 3);
}

// Each allreduce starts at the later of its bucket's readiness and the
// previous allreduce's end; the step ends with compute or the last allreduce.
TEST(Overlap, BucketsPipelineFromWhereTheyAreReady) {
  const std::vector<double> seconds = {3, 1, 2};
  const auto of = [&](size_t k) { return seconds[k]; };
  // 2 + 3 = 5; then 5 + 1 = 6; the last waits for backward's end at 10: 12.
  EXPECT_DOUBLE_EQ(pipelined_step(10, {0.2, 0.5, 1.0}, of), 12);
  // The first allreduce outlasts backward and the second queues behind it.
  const std::vector<double> long_first = {12, 1};
  EXPECT_DOUBLE_EQ(pipelined_step(10, {0.1, 0.9}, [&](size_t k) { return long_first[k]; }), 14);
  // All ready at the end: nothing hidden.
  EXPECT_DOUBLE_EQ(pipelined_step(10, {1.0, 1.0, 1.0}, of), 16);
  EXPECT_DOUBLE_EQ(pipelined_step(10, {}, of), 10);
}

struct Fitted {
  ComputeModel compute;
  AllreduceModel allreduce;
};

Fitted fit_parts(const Profile& p) { return {fit_compute(p.compute), fit_allreduce(p.allreduce)}; }

// A network slow enough that the allreduce is as long as the compute at the
// small batches: there p shapes the steps; at the default 1 GB/s the last
// bucket's floor hides it at every profiled size.
test::Truth slow_network(double p) {
  test::Truth t;
  t.p = p;
  t.bw = 1e8;
  return t;
}

TEST(Overlap, RecoversPFromMeasuredSteps) {
  const auto t = slow_network(2.5);
  const auto p = test::make_profile(t, 21);
  const auto f = fit_parts(p);
  const auto m = fit_overlap(p.overlap, f.compute, f.allreduce, p.model, p.buckets);
  EXPECT_EQ(m.source, "step_s");
  EXPECT_NEAR(m.p, 2.5, std::max(3 * m.p_se, 0.3));
  EXPECT_GT(m.p_se, 0);
}

TEST(Overlap, RecoversPFromHiddenFractionsAlone) {
  const auto t = slow_network(3);
  test::SyntheticOptions o;
  o.overlap_steps = false;
  const auto p = test::make_profile(t, 22, o);
  const auto f = fit_parts(p);
  const auto m = fit_overlap(p.overlap, f.compute, f.allreduce, p.model, p.buckets);
  EXPECT_EQ(m.source, "hidden_fraction");
  EXPECT_NEAR(m.p, 3, 0.6);
}

TEST(Overlap, StepTimesWithinTheirOwnSpreadLeavePToTheHiddenFractions) {
  const auto t = slow_network(3);
  auto p = test::make_profile(t, 24);
  const auto f = fit_parts(p);
  // As on one machine's loopback: each sample's step times spread by more
  // than the allreduce could move them, and their medians sit below the
  // compute model (its error, not the overlap), which alone would push p to
  // its bound. The hidden fractions still say p = 3.
  for (auto& s : p.overlap) {
    const double m = median(s.step_s) * 0.8;
    s.step_s = {0.7 * m, m, 1.3 * m};
  }
  const auto m = fit_overlap(p.overlap, f.compute, f.allreduce, p.model, p.buckets);
  EXPECT_EQ(m.source, "hidden_fraction");
  EXPECT_NEAR(m.p, 3, 0.6);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("cannot tell p"), std::string::npos);
}

TEST(Overlap, WithoutSamplesAssumesNoOverlap) {
  const auto p = test::make_profile({}, 23);
  const auto f = fit_parts(p);
  const auto m = fit_overlap({}, f.compute, f.allreduce, p.model, p.buckets);
  EXPECT_EQ(m.p, 1);
  EXPECT_EQ(m.source, "assumed");
  ASSERT_EQ(m.notes.size(), 1u);
  EXPECT_NE(m.notes[0].find("conservative"), std::string::npos);
}

}  // namespace
}  // namespace tula::predict
