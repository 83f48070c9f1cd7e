// What `tula train` prints when it ends: one summary, from rank 0, with the
// loss it measured, however many workers ran and however the run stopped.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "common/free_port.hpp"
#include "common/run_command.hpp"

namespace tula::train {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Summary, OnlyRankZeroReportsAndARunStoppedMidEpochReportsItsMeasuredLoss) {
  const auto r = testing::run_command(testing::tula_binary() +
                                          " train --nproc 2 --model small_cnn --dataset synthetic"
                                          " --synthetic-size 640 --batch-size 16 --max-steps 3 --no-eval"
                                          " --threads 1 --progress none --master-port " +
                                          std::to_string(testing::free_port()),
                                      300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(count(r.output, "\"steps\":"), 1) << r.output;
  const auto summary = nlohmann::json::parse(r.output.substr(r.output.rfind("\n{") + 1));
  EXPECT_EQ(summary["steps"], 3);
  EXPECT_EQ(summary["epochs"], 0);  // 640 / (2 x 16) = 20 steps per epoch: none ended
  ASSERT_TRUE(summary.contains("train_loss")) << summary.dump();
  // Ten random classes: the loss of three steps from scratch is near ln 10.
  EXPECT_GT(summary["train_loss"].get<double>(), 1.0);
  EXPECT_LT(summary["train_loss"].get<double>(), 5.0);
  EXPECT_FALSE(summary.contains("test_accuracy")) << "nothing was evaluated: " << summary.dump();
}

}  // namespace
}  // namespace tula::train
