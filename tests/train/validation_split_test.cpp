// `--validation-size` trains on the rest of the training set and evaluates on
// the held-out samples, never on the test split.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

const std::string kSynthetic =
    " train --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 256 --batch-size 32"
    " --epochs 1 --progress none --threads 1";

TEST(ValidationSplit, TrainsOnTheRestAndEvaluatesOnTheHeldOutSamples) {
  const testing::TempDir dir("tula-validation");
  const fs::path metrics = dir.path() / "metrics.jsonl";
  auto r = testing::run_command(testing::tula_binary() + kSynthetic + " --validation-size 64 --metrics " +
                                metrics.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream in(metrics);
  int iters = 0;
  bool started = false;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j["type"] == "start") {
      started = true;
      EXPECT_EQ(j["train_samples"], 192);
      EXPECT_EQ(j["evaluated_on"], "validation");
      EXPECT_EQ(j["evaluation_samples"], 64);
    }
    if (j["type"] == "iter") ++iters;
  }
  EXPECT_TRUE(started);
  EXPECT_EQ(iters, 6);  // 192 samples in batches of 32
}

TEST(ValidationSplit, ASplitAsLargeAsTheTrainingSetIsRefused) {
  auto r = testing::run_command(testing::tula_binary() + kSynthetic + " --validation-size 256");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("validation split of 256"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::train
