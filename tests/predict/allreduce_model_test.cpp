#include "predict/allreduce_model.hpp"

#include <gtest/gtest.h>

#include "predict/error.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

TEST(Allreduce, RingFormula) {
  const double alpha = 1e-4, inv_bw = 1e-9, m = 1e8;
  EXPECT_EQ(AllreduceModel::ring(1, m, alpha, inv_bw), 0.0);                    // nothing to exchange
  EXPECT_DOUBLE_EQ(AllreduceModel::ring(2, m, alpha, inv_bw), 2 * alpha + m * inv_bw);
  EXPECT_DOUBLE_EQ(AllreduceModel::ring(4, m, alpha, inv_bw), 6 * alpha + 1.5 * m * inv_bw);
  // Bandwidth term tends to 2 M / BW as N grows: the ring's optimality.
  EXPECT_NEAR(AllreduceModel::ring(1024, m, 0, inv_bw), 2 * m * inv_bw, 0.002 * m * inv_bw);
  // Buckets pay latency each, bandwidth once.
  EXPECT_DOUBLE_EQ(AllreduceModel::bucketed(4, m, 5, alpha, inv_bw), 5 * 6 * alpha + 1.5 * m * inv_bw);
}

TEST(Allreduce, BucketCountMatchesTheEngine) {
  BucketSettings b;  // 1 MiB first, then 25 MiB
  EXPECT_EQ(bucket_count(1000, b), 1);
  EXPECT_EQ(bucket_count(1 << 20, b), 1);
  EXPECT_EQ(bucket_count((1 << 20) + 1, b), 2);
  EXPECT_EQ(bucket_count(100LL << 20, b), 1 + 4);  // 99 MiB more in 25 MiB buckets
  EXPECT_EQ(bucket_count(26LL << 20, b), 2);
  // The last bucket backward fills: the rest after the first and the full ones.
  EXPECT_EQ(last_bucket_bytes(1000, b), 1000);
  EXPECT_EQ(last_bucket_bytes((1 << 20) + 1, b), 1);
  EXPECT_EQ(last_bucket_bytes(100LL << 20, b), 24LL << 20);  // 99 MiB = 3 x 25 + 24
  EXPECT_EQ(last_bucket_bytes(26LL << 20, b), 25LL << 20);
}

TEST(Allreduce, RecoversLatencyAndBandwidthWithinTheirUncertainty) {
  const test::Truth t;
  const int runs = 200;
  const auto covered = test::interval_coverage(
      t, runs, 500, [](const Profile& p) { return fit_allreduce(p.allreduce).params; },
      {{"alpha", t.alpha}, {"inv_bw", 1 / t.bw}});
  EXPECT_GE(covered.at("alpha"), 0.89 * runs);
  EXPECT_GE(covered.at("inv_bw"), 0.89 * runs);
  EXPECT_LE(covered.at("inv_bw"), 0.995 * runs);
  const auto m = fit_allreduce(test::make_profile(t, 1).allreduce);
  EXPECT_NEAR(m.bandwidth(), t.bw, 0.03 * t.bw);
}

TEST(Allreduce, NegativeLatencyIsHeldAtZero) {
  std::vector<AllreduceSample> s;
  for (int64_t n : {2, 4}) {
    for (int64_t bytes : {1 << 20, 4 << 20, 16 << 20}) {
      const double t = 2.0 * (n - 1) / n * bytes * 1e-9 - 2 * (n - 1) * 1e-6;  // latency "negative"
      s.push_back({n, bytes, {t}});
    }
  }
  const auto m = fit_allreduce(s);
  EXPECT_EQ(m.alpha(), 0.0);
  EXPECT_NEAR(m.params["inv_bw"], 1e-9, 2e-11);
  ASSERT_EQ(m.notes.size(), 1u);
}

TEST(Allreduce, TimeThatDoesNotGrowWithBytesIsAnError) {
  std::vector<AllreduceSample> s = {{2, 1000, {0.01}}, {2, 100000, {0.009}}, {2, 10000000, {0.008}}};
  EXPECT_THROW(fit_allreduce(s), FitError);
  EXPECT_THROW(fit_allreduce({{2, 1000, {0.01}}, {2, 2000, {0.02}}}), FitError);  // too few
}

}  // namespace
}  // namespace tula::predict
