// What `tula train` prints when it ends: one summary, from rank 0, with the
// loss it measured, however many workers ran and however the run stopped.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"

namespace tula::train {
namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(Summary, OnlyRankZeroReportsAndARunStoppedMidEpochReportsItsMeasuredLoss) {
  const auto r = testing::run_on_free_port(
      [](const std::string& port) {
        return testing::tula_binary() +
               " train --nproc 2 --model small_cnn --dataset synthetic --synthetic-size 640 --batch-size 16"
               " --max-steps 3 --no-eval --threads 1 --progress none --master-port " + port;
      },
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

// As `srun -n 2 tula train` starts it: no RANK in the environment, only
// Slurm's variables, and no launcher in between.
TEST(Summary, OnlyRankZeroReportsUnderSlurm) {
  const std::string train = testing::tula_binary() +
                            " train --model small_cnn --dataset synthetic --synthetic-size 640 --batch-size 16"
                            " --max-steps 2 --no-eval --threads 1 --progress none";
  const auto slurm_task = [&](int rank, const std::string& port) {
    return "env -u RANK -u WORLD_SIZE -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK SLURM_JOB_ID=7 SLURM_PROCID=" +
           std::to_string(rank) + " SLURM_LOCALID=" + std::to_string(rank) +
           " SLURM_NTASKS=2 SLURM_NTASKS_PER_NODE=2 SLURM_NNODES=1 SLURM_NODEID=0"
           " SLURM_JOB_NODELIST=localhost MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " " + train;
  };
  const auto r = testing::run_on_free_port(
      [&](const std::string& port) {
        return slurm_task(1, port) + " & " + slurm_task(0, port) + "; status=$?; wait $! || status=1; exit $status";
      },
      300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(count(r.output, "\"steps\":"), 1) << r.output;
  EXPECT_NE(r.output.find("\"train_loss\""), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::train
