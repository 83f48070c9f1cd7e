// `--eval-every` evaluates between epoch ends and `--target-accuracy` stops the
// run at the first evaluation that reaches the target.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

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

TEST(TargetAccuracy, NeedsEvaluation) {
  auto r = testing::run_command(testing::tula_binary() +
                                " train --dataset synthetic --synthetic-size 64 --no-eval --target-accuracy 0.5"
                                " --progress none");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--target-accuracy"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::train
