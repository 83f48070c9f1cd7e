// Large-batch training through `tula train`, as a user runs it: the
// optimizers and rules of docs/ags.md on short runs, and their bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

const std::string kSynthetic =
    " train --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --progress none --no-eval";

std::vector<nlohmann::json> records(const fs::path& path, const std::string& type) {
  std::vector<nlohmann::json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == type) out.push_back(j);
  }
  return out;
}

void expect_failure(const std::string& args, const std::string& message) {
  auto r = testing::run_command(testing::tula_binary() + args, 90);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: " << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << "expected '" << message << "' in:\n" << r.output;
}

TEST(LargeBatchBadInput, UnknownOptimizer) {
  expect_failure(kSynthetic + " --synthetic-size 128 --optimizer adamw9", "adamw9");
}

TEST(LargeBatchBadInput, AgsBoundsInverted) {
  expect_failure(kSynthetic + " --synthetic-size 128 --optimizer ags --ags-min 4 --ags-max 2", "--ags-min");
}

TEST(LargeBatchBadInput, AgsUnknownDirection) {
  expect_failure(kSynthetic + " --synthetic-size 128 --optimizer ags --ags-direction rmsprop", "--ags-direction");
}

TEST(LargeBatchBadInput, AgsDirectionWithAnotherOptimizer) {
  expect_failure(kSynthetic + " --synthetic-size 128 --optimizer sgd --ags-direction adam", "--ags-direction");
}

TEST(LargeBatchBadInput, ScheduleBatchThatDoesNotDivideAcrossWorkers) {
  expect_failure(kSynthetic + " --synthetic-size 512 --threads 1 --nproc 2 --master-port " +
                     std::to_string(testing::free_port()) + " --epochs 2 --batch-schedule 0:64,1:129",
                 "does not divide across 2 workers");
}

TEST(LargeBatchBadInput, MalformedBatchSchedule) {
  expect_failure(kSynthetic + " --synthetic-size 128 --batch-schedule 0:64,oops", "batch schedule");
}

TEST(LargeBatchBadInput, NonFiniteGradientsSkipThenStop) {
  const testing::TempDir dir("tula-lb");
  const auto metrics = dir.path() / "nan.jsonl";
  auto r = testing::run_command(testing::tula_binary() + kSynthetic +
                                    " --synthetic-size 512 --batch-size 32 --threads 1 --schedule constant"
                                    // --lr's bound is 100: scaled linearly from a batch of 1, the rate is 3200
                                    " --lr 100 --lr-scaling linear --reference-batch 1"
                                    " --max-bad-steps 3 --metrics " + metrics.string(),
                                90);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("non-finite gradients in 3 steps in a row"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("step skipped"), std::string::npos) << r.output;
  int skipped = 0;
  for (const auto& it : records(metrics, "iter")) skipped += it.value("skipped", false) ? 1 : 0;
  EXPECT_GE(skipped, 2);
}

class AgsWithTwoWorkers : public ::testing::TestWithParam<std::string> {};

TEST_P(AgsWithTwoWorkers, FactorsStayWithinBounds) {
  const testing::TempDir dir("tula-lb");
  const auto metrics = dir.path() / "ags.jsonl";
  const double lr = GetParam() == "adam" ? 0.002 : 0.05;
  auto r = testing::run_on_free_port([&](const std::string& port) {
    return testing::tula_binary() + kSynthetic + " --synthetic-size 1024 --batch-size 32 --threads 1 --nproc 2" +
           " --master-port " + port + " --optimizer ags --ags-direction " + GetParam() +
           " --reference-batch 16 --ags-min 0.5 --ags-max 3 --lr " + std::to_string(lr) +
           " --max-steps 12 --metrics " + metrics.string();
  });
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto iters = records(metrics, "iter");
  ASSERT_EQ(iters.size(), 12u);
  for (const auto& it : iters) {
    ASSERT_TRUE(it.contains("ags_factors")) << it.dump();
    for (const char* term : {"ags_noise_gain", "ags_trust", "ags_trend"}) {
      ASSERT_TRUE(it.contains(term)) << term << " missing from " << it.dump();
      EXPECT_GT(it[term]["min"].get<double>(), 0.0) << term;
    }
    EXPECT_GE(it["ags_factors"]["min"].get<double>(), 0.5);
    EXPECT_LE(it["ags_factors"]["max"].get<double>(), 3.0);
  }
  // After the first steps the noise statistic moves the factors off 1.
  EXPECT_NE(iters.back()["ags_factors"]["median"].get<double>(), 1.0);
}

INSTANTIATE_TEST_SUITE_P(LargeBatch, AgsWithTwoWorkers, ::testing::Values("momentum", "adam"),
                         [](const auto& info) { return info.param; });

TEST(LargeBatch, BatchScheduleMovesTheRateGradually) {
  const testing::TempDir dir("tula-lb");
  const auto metrics = dir.path() / "resize.jsonl";
  // 256 samples: 8 steps of 32, then 4 of 64; linear scaling doubles the rate.
  auto r = testing::run_command(testing::tula_binary() + kSynthetic +
                                    " --synthetic-size 256 --threads 1 --epochs 2 --batch-schedule 0:32,1:64"
                                    " --lr 0.1 --lr-scaling linear --reference-batch 32 --schedule constant"
                                    " --lr-transition-steps 4 --metrics " + metrics.string(),
                                120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto iters = records(metrics, "iter");
  ASSERT_EQ(iters.size(), 12u);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(iters[i]["lr"].get<double>(), 0.1) << i;
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(iters[8 + k]["lr"].get<double>(), 0.1 + 0.1 * k / 4.0, 1e-12) << k;
    EXPECT_EQ(iters[8 + k]["global_batch"].get<int>(), 64);
  }
  const auto resizes = records(metrics, "resize");
  ASSERT_EQ(resizes.size(), 1u);
  EXPECT_EQ(resizes[0]["to_global_batch"], 64);
}

}  // namespace
}  // namespace tula::train
