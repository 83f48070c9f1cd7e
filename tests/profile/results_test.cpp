// Reading what the measurements hand over: the communication trials' result
// documents and `tula train --metrics` files used as pilots.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/temp_dir.hpp"
#include "predict/error.hpp"
#include "profile/comm_trials.hpp"
#include "profile/pilot.hpp"

namespace tula::profile {
namespace {

namespace fs = std::filesystem;

TEST(WorkerResults, BecomeAllreduceOverlapAndContentionSamples) {
  const auto doc = nlohmann::json::parse(R"({
    "workers": 2, "workers_per_node": 2, "threads": 1,
    "allreduce": [{"bytes": 4096, "seconds": [1e-4, 2e-4]}, {"bytes": 65536, "seconds": [3e-4]}],
    "overlap": [{"batch_per_worker": 16, "forward_backward_s": [0.01, 0.012], "exposed_comm_s": [0.001, 0.002],
                 "comm_busy_s": [0.004, 0.004], "hidden_fraction": [0.5, 0.7, 0.9], "step_s": [0.011, 0.014],
                 "buckets": 2}]})");
  CommTrialResult r;
  add_worker_results(doc, r);
  ASSERT_EQ(r.allreduce.size(), 2u);
  EXPECT_EQ(r.allreduce[1].workers, 2);
  EXPECT_EQ(r.allreduce[1].bytes, 65536);
  ASSERT_EQ(r.overlap.size(), 1u);
  EXPECT_DOUBLE_EQ(r.overlap[0].hidden_fraction, 0.7) << "the median of the steps";
  EXPECT_EQ(r.overlap[0].step_s.size(), 2u);
  ASSERT_EQ(r.contention.size(), 1u);
  EXPECT_EQ(r.contention[0].workers_per_node, 2);
  EXPECT_EQ(r.raw.size(), 1u);

  CommTrialResult bad;
  EXPECT_THROW(add_worker_results(nlohmann::json::parse(R"({"workers": 2})"), bad), std::runtime_error);
}

TEST(PilotMetrics, StepsToTheFirstEpochAtTarget) {
  const tula::testing::TempDir dir("tula-pilot");
  const fs::path path = dir.path() / "metrics.jsonl";
  {
    std::ofstream out(path);
    out << R"({"type":"start","global_batch":128,"workers":2})" << "\n";
    for (int s = 1; s <= 6; ++s) {
      out << R"({"type":"iter","step":)" << s << R"(,"global_batch":128,"workers":2,"local_grad_sq":)" << 2.0 + s
          << R"(,"global_grad_sq":)" << 1.5 + s << "}\n";
    }
    out << R"({"type":"epoch","epoch":0,"step":3,"test_accuracy":0.80})" << "\n";
    out << R"({"type":"epoch","epoch":1,"step":6,"test_accuracy":0.86})" << "\n";
  }
  const auto m = read_pilot_metrics({path.string()}, 0.85);
  EXPECT_EQ(m.noise.size(), 6u);
  ASSERT_EQ(m.pilots.size(), 1u);
  EXPECT_EQ(m.pilots[0].global_batch, 128);
  EXPECT_EQ(m.pilots[0].steps_to_target, std::vector<double>{6});
  EXPECT_EQ(m.pilots[0].seconds_per_step, 0.0);  // no layout in the start record, no step times

  const auto missed = read_pilot_metrics({path.string()}, 0.95);
  EXPECT_TRUE(missed.pilots.empty());
  ASSERT_EQ(missed.notes.size(), 1u);
  EXPECT_NE(missed.notes[0].find("never reached"), std::string::npos);
  EXPECT_THROW(read_pilot_metrics({"/nonexistent/metrics.jsonl"}, 0.9), predict::ProfileError);
}

TEST(PilotMetrics, MeanStepTimeAfterWarmupWithItsLayout) {
  const tula::testing::TempDir dir("tula-pilot-timed");
  const fs::path path = dir.path() / "metrics.jsonl";
  {
    std::ofstream out(path);
    out << R"({"type":"start","global_batch":256,"workers":2,"batch_size":64,"accumulation_steps":2})" << "\n";
    // Two slow warm-up steps, then 0.3, 0.3, 0.6 s (median 0.3, mean 0.4: the
    // slow one is paid for); steps after the target are not counted.
    const double iter_s[] = {5.0, 2.0, 0.3, 0.3, 0.6, 9.0};
    for (int s = 1; s <= 6; ++s) {
      out << R"({"type":"iter","step":)" << s << R"(,"global_batch":256,"workers":2,"iter_s":)" << iter_s[s - 1]
          << R"(,"local_grad_sq":3.0,"global_grad_sq":2.0})" << "\n";
      if (s == 5) out << R"({"type":"eval","step":5,"test_accuracy":0.9})" << "\n";
    }
  }
  const auto m = read_pilot_metrics({path.string()}, 0.85);
  ASSERT_EQ(m.pilots.size(), 1u);
  EXPECT_EQ(m.pilots[0].steps_to_target, std::vector<double>{5});
  EXPECT_EQ(m.pilots[0].workers, 2);
  EXPECT_EQ(m.pilots[0].batch_per_worker, 64);
  EXPECT_EQ(m.pilots[0].accumulation_steps, 2);
  EXPECT_DOUBLE_EQ(m.pilots[0].seconds_per_step, 0.4);
}

}  // namespace
}  // namespace tula::profile
