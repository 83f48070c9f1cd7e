// The step's speed options through `tula train`, as a user runs them on the
// CPU: the foreach update trains the same trajectory as the per-tensor one,
// channels-last the same as the default layout, bf16 autocast runs and says
// so in the start record, and what cannot run here is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/metrics_records.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

const std::string kRun =
    " train --model small_cnn --dataset synthetic --synthetic-shape 3x28x28 --synthetic-size 256 --batch-size 32"
    " --max-steps 6 --threads 1 --progress none --no-eval --schedule constant --tensor-stats-every 0";

// Runs `tula train` with `args` after `run` and returns its metrics file.
fs::path train(const testing::TempDir& dir, const std::string& name, const std::string& args,
               const std::string& run = kRun) {
  const auto metrics = dir.path() / (name + ".jsonl");
  auto r = testing::run_command(testing::tula_binary() + run + args + " --metrics " + metrics.string(), 180);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return metrics;
}

std::vector<double> losses(const fs::path& metrics) {
  std::vector<double> out;
  for (const auto& it : testing::records_of_type(metrics, "iter")) out.push_back(it.at("loss").get<double>());
  return out;
}

void expect_same_losses(const fs::path& a, const fs::path& b, double tolerance) {
  const auto la = losses(a), lb = losses(b);
  ASSERT_EQ(la.size(), 6U);
  ASSERT_EQ(la.size(), lb.size());
  for (size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i], lb[i], tolerance) << "step " << i + 1;
}

TEST(StepOptions, ForeachUpdateTrainsThePerTensorTrajectory) {
  const testing::TempDir dir("tula-step-options");
  for (const std::string optimizer : {"sgd", "lars", "lamb", "ags"}) {
    const std::string o = " --optimizer " + optimizer + (optimizer == "lamb" ? " --lr 0.001" : "");
    expect_same_losses(train(dir, optimizer + "-per-tensor", o + " --optimizer-update per-tensor"),
                       train(dir, optimizer + "-foreach", o + " --optimizer-update foreach"), 1e-5);
  }
}

TEST(StepOptions, ChannelsLastTrainsTheSameTrajectoryAndIsRecorded) {
  const testing::TempDir dir("tula-step-options");
  const auto plain = train(dir, "plain", "");
  const auto nhwc = train(dir, "nhwc", " --channels-last");
  expect_same_losses(plain, nhwc, 1e-4);
  const auto start = testing::records_of_type(nhwc, "start");
  ASSERT_EQ(start.size(), 1U);
  EXPECT_TRUE(start[0].at("channels_last").get<bool>());
  EXPECT_EQ(start[0].at("precision"), "fp32");
  EXPECT_FALSE(testing::records_of_type(plain, "start")[0].at("channels_last").get<bool>());
}

// bf16 on the CPU: it runs and trains (not a speed claim: LibTorch 1.13's CPU
// bf16 kernels are not faster here).
TEST(StepOptions, Bf16AutocastRunsOnTheCpuAndIsRecorded) {
  const testing::TempDir dir("tula-step-options");
  const auto metrics = train(dir, "bf16", " --precision bf16");
  const auto start = testing::records_of_type(metrics, "start");
  ASSERT_EQ(start.size(), 1U);
  EXPECT_EQ(start[0].at("precision"), "bf16");
  const auto l = losses(metrics);
  ASSERT_EQ(l.size(), 6U);
  for (double v : l) EXPECT_TRUE(std::isfinite(v));
  // bf16 keeps about three significant digits: the same trajectory as fp32, loosely.
  const auto fp32 = losses(train(dir, "fp32", ""));
  EXPECT_NEAR(l.front(), fp32.front(), 0.05);
}

// Batches as bytes, converted where the model trains (here the CPU, as on a
// GPU but for the side stream): the trajectory of batches finished on the
// loader's thread. Synthetic data resized on the device (28 to 32 px);
// Fashion-MNIST with its crops and flips done on the bytes.
TEST(StepOptions, Uint8InputTrainsTheFloatTrajectory) {
  const testing::TempDir dir("tula-step-options");
  expect_same_losses(train(dir, "float32", " --image-size 32 --input-dtype float32"),
                     train(dir, "uint8", " --image-size 32 --input-dtype uint8"), 1e-5);
  const std::string fashion =
      " train --model lenet5 --dataset fashion-mnist --augment --batch-size 32 --max-steps 6 --threads 1"
      " --progress none --no-eval --schedule constant --tensor-stats-every 0";
  expect_same_losses(train(dir, "fashion-float32", " --input-dtype float32", fashion),
                     train(dir, "fashion-uint8", " --input-dtype uint8", fashion), 1e-5);
  auto r = testing::run_command(testing::tula_binary() + kRun + " --input-dtype int8", 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("unknown --input-dtype 'int8' (auto, float32, uint8)"), std::string::npos) << r.output;
}

TEST(StepOptions, Fp16OnTheCpuIsRefusedNamingTheWayOut) {
  auto r = testing::run_command(testing::tula_binary() + kRun + " --precision fp16", 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--precision fp16 needs --device cuda"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bf16"), std::string::npos) << r.output;
}

TEST(StepOptions, UnknownPrecisionAndUpdateAreRefusedByName) {
  auto r = testing::run_command(testing::tula_binary() + kRun + " --precision fp8", 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fp8"), std::string::npos) << r.output;
  r = testing::run_command(testing::tula_binary() + kRun + " --optimizer-update fused", 60);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--optimizer-update"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::train
