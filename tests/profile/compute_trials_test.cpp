// Compute, memory and evaluation trials on a small model: the samples have
// the shape the profile schema needs, and memory grows with the batch.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "predict/profile.hpp"
#include "predict/stats.hpp"
#include "profile/compute_trials.hpp"

namespace tula::profile {
namespace {

ModelTarget small_target() {
  ModelTarget t;
  t.model = "small_cnn";
  t.channels = 1;
  t.height = t.width = 28;
  return t;
}

TEST(ComputeTrials, EveryRepeatIsKeptAndMemoryGrowsWithTheBatch) {
  torch::set_num_threads(1);
  const auto target = small_target();
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  ComputeTrialOptions o;
  o.batches = {2, 8, 32};
  o.warmup = 1;
  o.repeats = 2;
  const auto r = run_compute_trials(model, target, o, nullptr);
  ASSERT_EQ(r.compute.size(), 3u);
  ASSERT_EQ(r.memory.size(), 3u);
  for (const auto& s : r.compute) {
    EXPECT_EQ(s.workers_per_node, 1);
    EXPECT_EQ(s.forward_backward_s.size(), 2u);
    EXPECT_EQ(s.optimizer_s.size(), 2u);
  }
  EXPECT_GT(r.memory[0].bytes, static_bytes(model));
  EXPECT_LT(r.memory[0].bytes, r.memory[1].bytes);
  EXPECT_LT(r.memory[1].bytes, r.memory[2].bytes);
  // The inputs alone are 28 x 28 floats a sample; activations are more.
  const double per_sample = static_cast<double>(r.memory[2].bytes - r.memory[1].bytes) / (32 - 8);
  EXPECT_GT(per_sample, 28 * 28 * 4);
  ASSERT_EQ(r.memory_detail.size(), 3u);
  EXPECT_GT(r.memory_detail[2]["live_after_forward_bytes"].get<int64_t>(),
            r.memory_detail[0]["live_after_forward_bytes"].get<int64_t>());
}

// Where in a step each bucket could start its allreduce: small_cnn's fully
// connected layers fill the first bucket early in backward; the convs' last
// bucket fills when backward ends.
TEST(ComputeTrials, EachBucketsReadinessIsRecordedInLaunchOrder) {
  torch::set_num_threads(1);
  const auto target = small_target();
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  ASSERT_GE(model.num_buckets(), 2);
  ComputeTrialOptions o;
  o.batches = {32};
  o.warmup = 1;
  o.repeats = 3;
  const auto r = run_compute_trials(model, target, o, nullptr);
  ASSERT_EQ(r.compute.size(), 1u);
  const auto& ready = r.compute.front().bucket_ready_fraction;
  ASSERT_EQ(static_cast<int64_t>(ready.size()), model.num_buckets());
  for (size_t k = 1; k < ready.size(); ++k) EXPECT_GE(ready[k], ready[k - 1]) << "bucket " << k;
  EXPECT_LT(ready.front(), ready.back());
  EXPECT_GT(ready.back(), 0.5);
  EXPECT_LE(ready.back(), 1.0);
}

TEST(ComputeTrials, AutomaticGridStopsAtTheMemoryLimit) {
  torch::set_num_threads(1);
  const auto target = small_target();
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  ComputeTrialOptions o;
  o.auto_first = 1;
  o.auto_ratio = 2;
  o.auto_max = 1024;
  o.warmup = 0;
  o.repeats = 1;
  // Room for the static memory and a few samples' activations only.
  o.memory_limit_bytes = static_bytes(model) * 3 + (4 << 20);
  const auto r = run_compute_trials(model, target, o, nullptr);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes.back().find("memory limit"), std::string::npos) << r.notes.back();
  EXPECT_LT(r.compute.back().batch_per_worker, 1024);
  for (const auto& m : r.memory) EXPECT_LE(m.bytes, o.memory_limit_bytes + (8 << 20));
}

TEST(ComputeTrials, BatchNormModelsStartAtTwo) {
  torch::set_num_threads(1);
  ModelTarget target;
  target.model = "resnet20";
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  ASSERT_TRUE(model.has_batch_norm());
  ComputeTrialOptions o;
  o.batches = {1, 2, 4};
  EXPECT_THROW(run_compute_trials(model, target, o, nullptr), std::invalid_argument);
  o.batches.clear();
  o.auto_first = 1;
  o.auto_max = 4;
  o.warmup = 0;
  o.repeats = 1;
  const auto r = run_compute_trials(model, target, o, nullptr);
  ASSERT_FALSE(r.compute.empty());
  EXPECT_EQ(r.compute.front().batch_per_worker, 2);
  EXPECT_FALSE(TrialModel(small_target(), nullptr, distributed::ReducerOptions{}).has_batch_norm());
}

TEST(ComputeTrials, PlannedBatchesAreTheGridTheTrialsWalk) {
  ComputeTrialOptions o;
  o.auto_first = 4;
  o.auto_ratio = 4;
  o.auto_max = 256;
  EXPECT_EQ(planned_batches(o, false), (std::vector<int64_t>{4, 16, 64, 256}));
  o.auto_first = 1;
  o.auto_max = 16;
  EXPECT_EQ(planned_batches(o, false), (std::vector<int64_t>{1, 4, 16}));
  EXPECT_EQ(planned_batches(o, true), (std::vector<int64_t>{2, 8}));
  o.batches = {3, 5, 7};
  EXPECT_EQ(planned_batches(o, true), (std::vector<int64_t>{3, 5, 7}));
}

TEST(ComputeTrials, AStopIsAskedOnlyPastTheFitsMinimum) {
  torch::set_num_threads(1);
  const auto target = small_target();
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  ComputeTrialOptions o;
  o.batches = {2, 4, 8, 16, 32};
  o.warmup = 0;
  o.repeats = 1;
  std::vector<int64_t> asked;
  o.stop_before = [&](int64_t b) {
    asked.push_back(b);
    return std::string("the time budget");
  };
  const auto r = run_compute_trials(model, target, o, nullptr);
  ASSERT_EQ(static_cast<int>(r.compute.size()), predict::kMinComputePoints);
  EXPECT_EQ(asked, std::vector<int64_t>{16});
  ASSERT_FALSE(r.notes.empty());
  EXPECT_EQ(r.notes.back(), "batch 16 and above not measured: the time budget");
}

TEST(EvaluationTrials, OneSamplePerCount) {
  torch::set_num_threads(1);
  const auto target = small_target();
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  EvaluationTrialOptions o;
  o.sample_counts = {8, 16, 40};
  o.eval_batch = 16;
  o.repeats = 2;
  const auto r = run_evaluation_trials(model, target, o, nullptr);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[2].samples, 40);
  EXPECT_EQ(r[2].seconds.size(), 2u);
  for (const auto& s : r) EXPECT_GT(predict::median(s.seconds), 0);
}

TEST(EvaluationTrials, TheCountsAreSizedToTheBudgetFromTheWarmUpPassTheirRatiosKept) {
  torch::set_num_threads(1);
  const auto target = small_target();
  TrialModel model(target, nullptr, distributed::ReducerOptions{});
  EvaluationTrialOptions o;
  o.sample_counts = {8, 16, 32};
  o.eval_batch = 16;
  o.repeats = 1;
  o.min_samples = 4;
  o.max_samples = 24;
  const auto counts = [&](double budget_s) {
    o.budget_s = budget_s;
    std::vector<int64_t> out;
    for (const auto& s : run_evaluation_trials(model, target, o, nullptr)) out.push_back(s.samples);
    return out;
  };
  // Far below and far above what any machine takes for a pass: the first
  // count lands on its bounds, the others keep their ratios to it.
  EXPECT_EQ(counts(1e-9), (std::vector<int64_t>{4, 8, 16}));
  EXPECT_EQ(counts(1e6), (std::vector<int64_t>{24, 48, 96}));
  EXPECT_EQ(counts(0), (std::vector<int64_t>{8, 16, 32})) << "no budget: the counts as given";
}

}  // namespace
}  // namespace tula::profile
