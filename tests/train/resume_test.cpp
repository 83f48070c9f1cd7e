// A run stopped mid-epoch and resumed from its checkpoint ends with the same
// weights as an uninterrupted run: same samples, same augmentation, same
// dropout masks, same momentum.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/checkpoint_weights.hpp"
#include "common/run_command.hpp"

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

}  // namespace
}  // namespace tula::train
