#include "tune/job_metrics.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "helpers/temp_dir.hpp"

namespace tula::tune {
namespace {

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

std::string iter(int64_t step, int64_t batch, int workers, double iter_s, double time) {
  return R"({"type":"iter","step":)" + std::to_string(step) + R"(,"global_batch":)" + std::to_string(batch) +
         R"(,"workers":)" + std::to_string(workers) + R"(,"iter_s":)" + std::to_string(iter_s) +
         R"(,"local_grad_sq":3.0,"global_grad_sq":2.0,"time":)" + std::to_string(time) + "}\n";
}

TEST(JobMetrics, ReadsCompleteLinesAsTheyArrive) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "m.jsonl").string();
  JobMetrics m(path);
  EXPECT_FALSE(m.poll());  // not written yet
  append(path, R"({"type":"start","global_batch":128,"workers":2,"steps_per_epoch":10,"train_samples":1280,"time":1})" "\n");
  append(path, iter(1, 128, 2, 0.5, 2) + iter(2, 128, 2, 0.4, 3));
  append(path, R"({"type":"iter","step":3,"glob)");  // a line still being written
  ASSERT_TRUE(m.poll());
  EXPECT_EQ(m.last_step(), 2);
  EXPECT_DOUBLE_EQ(m.samples(), 256);
  append(path, R"(al_batch":128,"workers":2,"iter_s":0.3,"time":4})" "\n");
  ASSERT_TRUE(m.poll());
  EXPECT_EQ(m.last_step(), 3);
  EXPECT_DOUBLE_EQ(m.steps().back().iter_s, 0.3);
  append(path, R"({"type":"eval","step":3,"test_accuracy":0.5,"test_loss":1.2,"eval_s":0.7,"time":5})" "\n");
  m.poll();
  ASSERT_EQ(m.evaluations().size(), 1u);
  EXPECT_DOUBLE_EQ(m.evaluations()[0].samples, 384);
  EXPECT_DOUBLE_EQ(*m.best_accuracy(), 0.5);
}

TEST(JobMetrics, ARelaunchRedoingStepsReplacesThem) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "m.jsonl").string();
  std::string text = R"({"type":"start","global_batch":64,"workers":2,"time":0})" "\n";
  for (int s = 1; s <= 6; ++s) text += iter(s, 64, 2, 0.1, s);
  text += R"({"type":"eval","step":6,"test_accuracy":0.4,"time":7})" "\n";
  // Crashed after step 6; the checkpoint was at step 4; relaunched at another batch.
  text += R"({"type":"start","global_batch":128,"workers":2,"time":10})" "\n";
  text += iter(5, 128, 2, 0.2, 11) + iter(6, 128, 2, 0.2, 12);
  append(path, text);
  JobMetrics m(path);
  m.poll();
  ASSERT_EQ(m.steps().size(), 6u);
  EXPECT_EQ(m.steps()[4].global_batch, 128);
  EXPECT_DOUBLE_EQ(m.samples(), 4 * 64 + 2 * 128);
  EXPECT_TRUE(m.evaluations().empty()) << "the evaluation at the redone step 6 belongs to the lost steps";
  EXPECT_EQ(m.launches().size(), 2u);
  EXPECT_EQ(m.launches()[1].first_step_index, 4u);
}

TEST(JobMetrics, RecentIterationTimeSkipsALaunchsFirstSteps) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "m.jsonl").string();
  std::string text = R"({"type":"start","global_batch":64,"workers":2,"time":0})" "\n";
  text += iter(1, 64, 2, 9.0, 1) + iter(2, 64, 2, 9.0, 2);  // one-time costs
  for (int s = 3; s <= 9; ++s) text += iter(s, 64, 2, 0.25, s);
  append(path, text);
  JobMetrics m(path);
  m.poll();
  EXPECT_EQ(m.recent_iteration_times(40), std::vector<double>(7, 0.25));
  EXPECT_TRUE(m.recent_iteration_times(40, 20).empty());
  EXPECT_EQ(m.noise_samples().size(), 9u);
  EXPECT_EQ(m.noise_samples()[0].local_batch, 32);
}

TEST(JobMetrics, RecentIterationTimesAreTheLatestOnes) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "m.jsonl").string();
  std::string text = R"({"type":"start","global_batch":64,"workers":2,"time":0})" "\n";
  text += iter(1, 64, 2, 9.0, 1) + iter(2, 64, 2, 9.0, 2);
  for (int s = 3; s <= 12; ++s) text += iter(s, 64, 2, 0.1 * s, s);
  append(path, text);
  JobMetrics m(path);
  m.poll();
  const auto last_five = m.recent_iteration_times(5);
  ASSERT_EQ(last_five.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR(last_five[i], 0.1 * static_cast<double>(12 - i), 1e-9);
  EXPECT_EQ(m.recent_iteration_times(40).size(), 10u);
}

TEST(JobMetrics, AMalformedLineIsSkippedNamedAndTheRestRead) {
  // A worker killed mid-line leaves half a record; the relaunch appends after it.
  testing::TempDir dir;
  const std::string path = (dir.path() / "m.jsonl").string();
  append(path, "{\"type\":\"start\"}\nnot json\n" + iter(1, 64, 2, 0.1, 1));
  JobMetrics m(path);
  ASSERT_TRUE(m.poll());
  EXPECT_EQ(m.last_step(), 1) << "the records after the bad line count";
  EXPECT_EQ(m.skipped_lines(), 1);
  EXPECT_NE(m.first_problem().find("m.jsonl:2"), std::string::npos) << m.first_problem();
}

}  // namespace
}  // namespace tula::tune
