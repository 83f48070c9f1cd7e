// A run stopped mid-epoch and resumed from its checkpoint ends with the same
// weights as an uninterrupted run: same samples, same augmentation, same
// dropout masks, same momentum.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/checkpoint_weights.hpp"
#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;


TEST(Resume, MidEpochResumeReproducesTheUninterruptedRun) {
  const fs::path dir = fs::temp_directory_path() / ("tula-resume-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string base = testing::tula_binary() +
                           " train --model small_cnn --dataset fashion-mnist --batch-size 32 --lr 0.05"
                           " --no-eval --threads 1 --progress none --seed 5";
  auto straight = testing::run_command(base + " --max-steps 6 --checkpoint-every 6 --checkpoint-dir " +
                                       (dir / "straight").string());
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  auto first = testing::run_command(base + " --max-steps 3 --checkpoint-every 3 --checkpoint-dir " +
                                    (dir / "split").string());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  {
    std::ifstream meta(dir / "split" / "latest.json");
    auto state = nlohmann::json::parse(meta);
    EXPECT_EQ(state["step_in_epoch"], 3);
    EXPECT_EQ(state["global_step"], 3);
  }
  auto second = testing::run_command(base + " --max-steps 6 --checkpoint-every 3 --resume --checkpoint-dir " +
                                     (dir / "split").string());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_NE(second.output.find("resuming from"), std::string::npos) << second.output;

  const auto a = testing::checkpoint_weights((dir / "straight").string(), "small_cnn", {1, 10, 28});
  const auto b = testing::checkpoint_weights((dir / "split").string(), "small_cnn", {1, 10, 28});
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7)) << "tensor " << i;
  }
  fs::remove_all(dir);
}

TEST(Resume, CorruptCheckpointIsReported) {
  const fs::path dir = fs::temp_directory_path() / ("tula-badckpt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "latest.pt") << "not a checkpoint";
  auto r = testing::run_command(testing::tula_binary() +
                                " train --dataset synthetic --synthetic-size 64 --batch-size 8 --max-steps 1"
                                " --progress none --resume --checkpoint-dir " + dir.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("latest.pt"), std::string::npos) << r.output;
  fs::remove_all(dir);
}

// A resize across worker counts is a restart: one worker at global batch 32
// checkpoints, two workers at global batch 64 resume from it, and the rate
// climbs from the old batch's value to the new one's over the transition
// window instead of jumping (linear scaling: 0.05 -> 0.1 over 4 steps).
TEST(Resume, ResizeAcrossWorkerCountsMovesTheRateGradually) {
  const fs::path dir = fs::temp_directory_path() / ("tula-resize-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string base = testing::tula_binary() +
                           " train --model small_cnn --dataset fashion-mnist --batch-size 32 --lr 0.05"
                           " --lr-scaling linear --reference-batch 32 --lr-transition-steps 4"
                           " --no-eval --threads 1 --progress none --seed 5 --checkpoint-dir " +
                           (dir / "ck").string();
  auto one = testing::run_command(base + " --max-steps 3 --checkpoint-every 3");
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto metrics = dir / "two.jsonl";
  auto two = testing::run_on_free_port([&](const std::string& port) {
    return base + " --nproc 2 --master-port " + port + " --max-steps 9 --resume --metrics " + metrics.string();
  });
  ASSERT_EQ(two.exit_code, 0) << two.output;

  std::ifstream in(metrics);
  std::string line;
  bool resized = false;
  std::vector<double> rates;
  while (std::getline(in, line)) {
    const auto r = nlohmann::json::parse(line);
    if (r["type"] == "resize") {
      resized = true;
      EXPECT_EQ(r["from_global_batch"], 32);
      EXPECT_EQ(r["to_global_batch"], 64);
    }
    if (r["type"] == "iter") rates.push_back(r["lr"].get<double>());
  }
  EXPECT_TRUE(resized);
  ASSERT_EQ(rates.size(), 6u);  // global steps 4..9 after the checkpoint at step 3
  EXPECT_NEAR(rates[0], 0.05, 1e-3);
  for (size_t i = 1; i < 5; ++i) EXPECT_NEAR(rates[i] - rates[i - 1], 0.0125, 1e-3) << "step " << i;
  EXPECT_NEAR(rates[4], 0.1, 1e-3);
  EXPECT_NEAR(rates[5], 0.1, 1e-3);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tula::train
