// The CUDA path end to end, through `tula train --device cuda` as a user runs
// it: two workers, one epoch (steps, the epoch-end loss sum and the
// evaluation's allreduce, all on GPU tensors), a checkpoint, and a resume
// from it. With two or more GPUs the workers talk NCCL; with one they share
// it over Gloo's CUDA collectives (NCCL refuses two ranks on one device).
// Skipped, saying why, where this LibTorch has no CUDA or sees no GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"
#include "common/remove_tree.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

int last_epoch_records(const fs::path& metrics, nlohmann::json& last) {
  std::ifstream in(metrics);
  std::string line;
  int epochs = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    if (j.value("type", "") == "epoch") {
      ++epochs;
      last = j;
    }
  }
  return epochs;
}

TEST(Cuda, TwoWorkersTrainAnEpochEvaluateCheckpointAndResume) {
  if (!torch::cuda::is_available()) {
    GTEST_SKIP() << "no CUDA: this LibTorch was built without it or no GPU is visible "
                    "(build against a CUDA LibTorch with CMAKE_PREFIX_PATH to run this test)";
  }
  const bool two_gpus = torch::cuda::device_count() >= 2;
  const fs::path dir = fs::temp_directory_path() / ("tula-cuda-" + std::to_string(::getpid()));
  common::remove_tree(dir);
  const std::string base = testing::tula_binary() +
                           " train --nproc 2 --device cuda --backend " + (two_gpus ? "nccl" : "gloo") +
                           " --model resnet20 --dataset synthetic --synthetic-size 512 --batch-size 32"
                           " --progress none --checkpoint-dir " + (dir / "ckpt").string() +
                           " --metrics " + (dir / "metrics.jsonl").string();
  const auto first =
      testing::run_on_free_port([&](const std::string& port) { return base + " --epochs 1 --master-port " + port; }, 600);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  nlohmann::json epoch;
  ASSERT_EQ(last_epoch_records(dir / "metrics.jsonl", epoch), 1) << first.output;
  EXPECT_TRUE(epoch.contains("test_accuracy")) << epoch.dump();
  EXPECT_TRUE(fs::exists(dir / "ckpt" / "latest.pt"));
  const auto summary = nlohmann::json::parse(first.output.substr(first.output.rfind("\n{") + 1));
  EXPECT_EQ(summary["steps"], 8);  // 512 samples / (2 workers x 32)

  const auto resumed = testing::run_on_free_port(
      [&](const std::string& port) { return base + " --epochs 2 --resume --master-port " + port; }, 600);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming from"), std::string::npos) << resumed.output;
  EXPECT_EQ(last_epoch_records(dir / "metrics.jsonl", epoch), 2) << resumed.output;
  EXPECT_EQ(epoch["step"], 16);
  common::remove_tree(dir);
}

}  // namespace
}  // namespace tula::train
