// `--eval-every` evaluates between epoch ends and `--target-accuracy` stops the
// run at the first evaluation that reaches the target.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/metrics_records.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;
using testing::records_of_type;

TEST(TargetAccuracy, StopsAtTheFirstEvaluationThatReachesIt) {
  const testing::TempDir dir("tula-target");
  const fs::path metrics = dir.path() / "metrics.jsonl";
  // Ten classes of random data: any model is right about 10% of the time, so
  // a 1% target is reached at the first evaluation, after step 3.
  auto r = testing::run_command(testing::tula_binary() +
                                " train --model small_cnn --dataset synthetic --synthetic-shape 1x28x28"
                                " --synthetic-size 512 --batch-size 32 --epochs 3 --eval-every 3 --target-accuracy 0.01"
                                " --progress none --threads 1 --metrics " + metrics.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("reached the target"), std::string::npos) << r.output;
  int iters = 0, evals = 0;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "iter") ++iters;
    if (j["type"] == "eval") {
      ++evals;
      EXPECT_EQ(j["step"], 3);
      EXPECT_GT(j["train_s"].get<double>(), 0.0);
      EXPECT_GE(j["test_accuracy"].get<double>(), 0.01);
    }
  }
  EXPECT_EQ(iters, 3);
  EXPECT_EQ(evals, 1);
}

std::string train_on_validation(const fs::path& metrics, const std::string& extra) {
  return testing::tula_binary() +
         " train --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 512 --batch-size 32"
         " --validation-size 100 --final-test --progress none --threads 1 --metrics " +
         metrics.string() + " " + extra;
}

// The curve and the target read the validation split; the test split is read
// once, after the run ended by reaching the target.
TEST(TargetAccuracy, AValidationRunReadsTheTestSplitOnceAtTheEnd) {
  const testing::TempDir dir("tula-final-test");
  const fs::path metrics = dir.path() / "metrics.jsonl";
  auto r = testing::run_command(train_on_validation(metrics, "--epochs 3 --eval-every 3 --target-accuracy 0.01"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto start = records_of_type(metrics, "start");
  ASSERT_EQ(start.size(), 1u);
  EXPECT_EQ(start[0]["evaluated_on"], "validation");
  EXPECT_EQ(start[0]["evaluation_samples"], 100);
  EXPECT_EQ(start[0]["train_samples"], 412);
  ASSERT_EQ(records_of_type(metrics, "eval").size(), 1u);
  const auto final_test = records_of_type(metrics, "final_test");
  ASSERT_EQ(final_test.size(), 1u) << r.output;
  EXPECT_EQ(final_test[0]["step"], 3);
  EXPECT_EQ(final_test[0]["samples"], 102) << "the whole synthetic test split (a fifth of 512), not the validation samples";
  EXPECT_GE(final_test[0]["test_accuracy"].get<double>(), 0.0);
  EXPECT_NE(r.output.find("final test accuracy"), std::string::npos) << r.output;
}

// A run cut short by --max-steps is a segment of a longer job: no final test.
TEST(TargetAccuracy, ARunCutShortReadsNoTestSplit) {
  const testing::TempDir dir("tula-final-test");
  const fs::path metrics = dir.path() / "metrics.jsonl";
  auto r = testing::run_command(train_on_validation(metrics, "--epochs 2 --max-steps 4"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(records_of_type(metrics, "final_test").empty());
  auto whole = testing::run_command(train_on_validation(metrics.string() + "2", "--epochs 1"));
  ASSERT_EQ(whole.exit_code, 0) << whole.output;
  EXPECT_EQ(records_of_type(metrics.string() + "2", "final_test").size(), 1u) << "the last epoch done: its end";
}

TEST(TargetAccuracy, FinalTestNeedsAValidationSplit) {
  auto r = testing::run_command(testing::tula_binary() +
                                " train --dataset synthetic --synthetic-size 64 --final-test --progress none");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--final-test needs --validation-size"), std::string::npos) << r.output;
}

TEST(TargetAccuracy, NeedsEvaluation) {
  auto r = testing::run_command(testing::tula_binary() +
                                " train --dataset synthetic --synthetic-size 64 --no-eval --target-accuracy 0.5"
                                " --progress none");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--target-accuracy"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::train
