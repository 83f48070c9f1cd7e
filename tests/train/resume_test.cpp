// A run stopped mid-epoch and resumed from its checkpoint ends with the same
// weights as an uninterrupted run: same samples, same augmentation, same
// dropout masks, same momentum; whether it stopped at --max-steps or on a
// signal.
#include <gtest/gtest.h>
#include <signal.h>
#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/checkpoint_weights.hpp"
#include "helpers/child_process.hpp"
#include "helpers/free_port.hpp"
#include "helpers/metrics_records.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

void expect_same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_TRUE(torch::allclose(a[i], b[i], 1e-6, 1e-7)) << "tensor " << i;
  }
}

TEST(Resume, MidEpochResumeReproducesTheUninterruptedRun) {
  const testing::TempDir temp("tula-resume");
  const fs::path dir = temp.path();
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

  expect_same_weights(testing::checkpoint_weights((dir / "straight").string(), "small_cnn", {1, 10, 28}),
                      testing::checkpoint_weights((dir / "split").string(), "small_cnn", {1, 10, 28}));
}

// The last evaluation in a metrics file: (step, accuracy, loss).
std::tuple<int64_t, double, double> last_evaluation(const fs::path& metrics) {
  const auto evaluations = testing::records_of_type(metrics, "eval");
  if (evaluations.empty()) return {-1, 0, 0};
  const auto& last = evaluations.back();
  return {last["step"], last["test_accuracy"], last["test_loss"]};
}

// The averaged weights an evaluation scores (--eval-average) are part of the
// checkpoint: a run resumed mid-epoch scores what the uninterrupted run
// scores, where an average started again from the resumed weights would not.
TEST(Resume, TheAveragedWeightsResumeWhereTheyStood) {
  const testing::TempDir temp("tula-resume-average");
  const fs::path dir = temp.path();
  const std::string base = testing::tula_binary() +
                           " train --model small_cnn --dataset fashion-mnist --batch-size 32 --lr 0.05"
                           " --validation-size 500 --eval-every 4 --eval-average 0.99 --threads 1 --progress none"
                           " --seed 5";
  auto straight = testing::run_command(base + " --max-steps 8 --metrics " + (dir / "straight.jsonl").string() +
                                       " --checkpoint-dir " + (dir / "straight").string());
  ASSERT_EQ(straight.exit_code, 0) << straight.output;
  auto first = testing::run_command(base + " --max-steps 6 --checkpoint-every 6 --checkpoint-dir " +
                                    (dir / "split").string());
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto second = testing::run_command(base + " --max-steps 8 --resume --metrics " + (dir / "split.jsonl").string() +
                                     " --checkpoint-dir " + (dir / "split").string());
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const auto [step, accuracy, loss] = last_evaluation(dir / "straight.jsonl");
  const auto [resumed_step, resumed_accuracy, resumed_loss] = last_evaluation(dir / "split.jsonl");
  ASSERT_EQ(step, 8);
  ASSERT_EQ(resumed_step, 8);
  EXPECT_DOUBLE_EQ(resumed_accuracy, accuracy);
  EXPECT_NEAR(resumed_loss, loss, 1e-5);
  // Not the weights themselves: at step 8 they score another loss.
  auto unaveraged = testing::run_command(testing::tula_binary() +
                                         " train --model small_cnn --dataset fashion-mnist --batch-size 32 --lr 0.05"
                                         " --validation-size 500 --eval-every 4 --threads 1 --progress none --seed 5"
                                         " --max-steps 8 --metrics " + (dir / "weights.jsonl").string());
  ASSERT_EQ(unaveraged.exit_code, 0) << unaveraged.output;
  EXPECT_GT(std::abs(std::get<2>(last_evaluation(dir / "weights.jsonl")) - loss), 1e-3);
}

// Two workers under the launcher, stopped by SIGTERM once step 3 is done:
// every worker stops after the same step, rank 0 checkpoints there, and the
// run resumed from that checkpoint ends with the weights of a run never
// stopped. Nothing but the signal ends the first run (it has epochs to
// spare), so where it stops is wherever the signal found it.
TEST(Resume, RunStoppedBySigtermResumesToTheUninterruptedRun) {
  const testing::TempDir dir("tula-resume-signal");
  const std::string base = testing::tula_binary() +
                           " train --nproc 2 --model small_cnn --dataset synthetic --synthetic-size 256"
                           " --synthetic-shape 1x28x28 --batch-size 8 --lr 0.05 --no-eval --threads 1"
                           " --progress none --seed 11 --epochs 1000";
  const fs::path metrics = dir.path() / "stopped.jsonl";
  int exit_code = -1;
  std::string output;
  for (int attempt = 0; attempt < 5 && exit_code < 0; ++attempt) {
    testing::ChildProcess run(testing::words(base + " --master-port " + std::to_string(testing::free_port()) +
                                             " --checkpoint-dir " + dir.file("split") + " --metrics " +
                                             metrics.string()),
                              dir.file("stopped.log"));
    ASSERT_TRUE(testing::eventually(
        [&] { return testing::last_iter_step(testing::metrics_records(metrics)) >= 3 || run.ended(); },
        "step 3 in " + metrics.string(), 300s))
        << run.output();
    if (run.ended()) {  // it cannot end by itself, unless its port was taken
      ASSERT_TRUE(testing::says_port_in_use(run.output())) << "exit " << run.exit_code() << "\n" << run.output();
      continue;
    }
    ASSERT_TRUE(run.send(SIGTERM));
    exit_code = run.wait();
    output = run.output();
  }
  ASSERT_EQ(exit_code, 128 + SIGTERM) << output;
  EXPECT_NE(output.find("received SIGTERM; forwarding it to 2 worker(s)"), std::string::npos) << output;
  EXPECT_NE(output.find("\"stopped_by_signal\":\"SIGTERM\""), std::string::npos) << output;

  const auto records = testing::metrics_records(metrics);
  const auto stopped = testing::records_of(records, "stopped");
  ASSERT_EQ(stopped.size(), 1u) << output;
  const int64_t step = stopped[0]["step"].get<int64_t>();
  EXPECT_GE(step, 3);
  EXPECT_EQ(stopped[0]["signal"], "SIGTERM");
  EXPECT_EQ(stopped[0]["checkpointed"], true);
  EXPECT_EQ(testing::last_iter_step(records), step) << "no step may run after the agreed stop";
  const auto state = nlohmann::json::parse(testing::read_text(dir.path() / "split" / "latest.json"));
  EXPECT_EQ(state["global_step"], step);
  EXPECT_EQ(state["epoch"], stopped[0]["epoch"]);
  EXPECT_EQ(state["step_in_epoch"], stopped[0]["step_in_epoch"]);

  // Four steps past the stop, resumed and straight through, each
  // checkpointed where --max-steps ends it.
  const std::string total = std::to_string(step + 4);
  const std::string finish = " --max-steps " + total + " --checkpoint-every " + total;
  const auto resumed = testing::run_on_free_port(
      [&](const std::string& port) {
        return base + finish + " --master-port " + port + " --resume --checkpoint-dir " + dir.file("split");
      },
      300);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resuming from"), std::string::npos) << resumed.output;
  EXPECT_NE(resumed.output.find("\"steps\":" + total), std::string::npos) << resumed.output;
  const auto straight = testing::run_on_free_port(
      [&](const std::string& port) {
        return base + finish + " --master-port " + port + " --checkpoint-dir " + dir.file("straight");
      },
      300);
  ASSERT_EQ(straight.exit_code, 0) << straight.output;

  expect_same_weights(testing::checkpoint_weights(dir.file("straight"), "small_cnn", {1, 10, 28}),
                      testing::checkpoint_weights(dir.file("split"), "small_cnn", {1, 10, 28}));
}

// A stop at an epoch's last step counts that step's partial batch whole:
// 224 samples at 64 are four steps (the last of 32), 4 x 64 = 256 samples,
// which at 16 is step 16 of an epoch of 14. The run resumed at 16 goes on
// from the epoch's end (its record, then the next epoch) instead of asking
// the loader for a batch past the epoch. The signal is sent when step 3 is
// recorded, so that it lands during step 4; a stop elsewhere is tried again.
TEST(Resume, AStopAtAnEpochsLastStepResumesAtAnotherBatch) {
  const testing::TempDir dir("tula-resume-edge");
  const std::string base = testing::tula_binary() +
                           " train --model resnet20 --dataset synthetic --synthetic-size 224"
                           " --synthetic-shape 3x32x32 --lr 0.05 --no-eval --threads 1 --progress none"
                           " --seed 3 --epochs 3 --checkpoint-dir " + dir.file("ck");
  const fs::path stopped_metrics = dir.path() / "stopped.jsonl";
  nlohmann::json stop;
  std::string tried;
  for (int attempt = 0; attempt < 8; ++attempt) {
    fs::remove_all(dir.path() / "ck");
    fs::remove(stopped_metrics);
    testing::ChildProcess run(testing::words(base + " --batch-size 64 --metrics " + stopped_metrics.string()),
                              dir.file("stopped.log"));
    ASSERT_TRUE(testing::eventually(
        [&] { return testing::last_iter_step(testing::metrics_records(stopped_metrics)) >= 3 || run.ended(); },
        "step 3 in " + stopped_metrics.string(), 300s))
        << run.output();
    ASSERT_FALSE(run.ended()) << "exit " << run.exit_code() << "\n" << run.output();
    ASSERT_TRUE(run.send(SIGTERM));
    ASSERT_EQ(run.wait(), 128 + SIGTERM) << run.output();
    const auto stopped = testing::records_of(testing::metrics_records(stopped_metrics), "stopped");
    ASSERT_EQ(stopped.size(), 1u) << run.output();
    tried += " " + stopped[0].dump();
    if (stopped[0]["epoch"] == 0 && stopped[0]["step_in_epoch"] == 4) {
      stop = stopped[0];
      break;
    }
  }
  ASSERT_FALSE(stop.is_null()) << "no stop at the epoch's last step in 8 tries:" << tried;

  const fs::path metrics = dir.path() / "resumed.jsonl";
  const auto resumed =
      testing::run_command(base + " --batch-size 16 --resume --max-steps 10 --metrics " + metrics.string(), 300);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("at epoch 1 step 14 (global step 4)"), std::string::npos) << resumed.output;
  const auto records = testing::metrics_records(metrics);
  const auto epochs = testing::records_of(records, "epoch");
  ASSERT_FALSE(epochs.empty()) << resumed.output;
  EXPECT_EQ(epochs[0]["epoch"], 0) << "the stopped epoch's end comes first";
  const auto iters = testing::records_of(records, "iter");
  ASSERT_EQ(iters.size(), 6u) << resumed.output;  // global steps 5..10, all in the next epoch
  for (size_t i = 0; i < iters.size(); ++i) {
    EXPECT_EQ(iters[i]["step"], static_cast<int64_t>(5 + i));
    EXPECT_EQ(iters[i]["epoch"], 1);
    EXPECT_EQ(iters[i]["step_in_epoch"], static_cast<int64_t>(1 + i));
  }
}

TEST(Resume, CorruptCheckpointIsReported) {
  const testing::TempDir temp("tula-badckpt");
  const fs::path dir = temp.path();
  std::ofstream(dir / "latest.pt") << "not a checkpoint";
  auto r = testing::run_command(testing::tula_binary() +
                                " train --dataset synthetic --synthetic-size 64 --batch-size 8 --max-steps 1"
                                " --progress none --resume --checkpoint-dir " + dir.string());
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("latest.pt"), std::string::npos) << r.output;
}

// A resize across worker counts is a restart: one worker at global batch 32
// checkpoints, two workers at global batch 64 resume from it, and the rate
// climbs from the old batch's value to the new one's over the transition
// window instead of jumping (linear scaling: 0.05 -> 0.1 over 4 steps).
TEST(Resume, ResizeAcrossWorkerCountsMovesTheRateGradually) {
  const testing::TempDir temp("tula-resize");
  const fs::path dir = temp.path();
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
}

}  // namespace
}  // namespace tula::train
