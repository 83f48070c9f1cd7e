// Bad input, as a user would meet it: each case ends promptly with a non-zero
// exit and a message that names the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/free_port.hpp"
#include "helpers/listening_socket.hpp"
#include "helpers/run_command.hpp"
#include "helpers/shell_wait.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::cli {
namespace {

using testing::CommandResult;
using testing::expect_tula_fails;
using testing::run_command;
using testing::says_port_in_use;
using testing::tula_binary;
using testing::with_free_port;

const std::string kQuick =
    " --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 256 --progress none --threads 1";

TEST(BadInput, EverySubcommandHasHelp) {
  for (const std::string sub : {"", " train", " launch", " models"}) {
    auto r = run_command(tula_binary() + sub + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << sub;
  }
}

TEST(BadInput, MissingDataDirectory) {
  expect_tula_fails("train --dataset fashion-mnist --data-dir /nonexistent/fmnist --progress none",
                 "/nonexistent/fmnist");
}

TEST(BadInput, CorruptIdxFile) {
  const testing::TempDir dir("tula-corrupt");
  for (const std::string name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                 "t10k-labels-idx1-ubyte"}) {
    std::ofstream(dir.path() / name) << "this is not an IDX file";
  }
  expect_tula_fails("train --dataset fashion-mnist --progress none --data-dir " + dir.str(), "train-images-idx3-ubyte");
}

TEST(BadInput, UnknownModel) { expect_tula_fails("train --model resnet9000" + kQuick, "resnet9000"); }

TEST(BadInput, BatchSizeZero) { expect_tula_fails("train --batch-size 0" + kQuick, "--batch-size"); }

TEST(BadInput, WeightAverageDecayOfOne) {
  // A decay of 1 would never move the average off the initial weights.
  expect_tula_fails("train --eval-average 1" + kQuick, "--eval-average must be a number from 0 to below 1 (got 1)");
}

// The range tune and the API check, in their words (common/number_range.hpp).
TEST(BadInput, TargetAccuracyOfOneOrMore) {
  expect_tula_fails("train --target-accuracy 1.5" + kQuick,
                    "--target-accuracy must be a number from 0 to below 1 (got 1.5)");
}

TEST(BadInput, BatchLargerThanDataSet) { expect_tula_fails("train --batch-size 512" + kQuick, "exceeds"); }

TEST(BadInput, RendezvousThatNeverCompletes) {
  CommandResult r;
  ASSERT_TRUE(with_free_port([&](int port) {
    r = run_command("RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) +
                        " " + tula_binary() + " train --rendezvous-timeout 3" + kQuick,
                    60);
    return !says_port_in_use(r.output);
  }));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << r.output;
  EXPECT_NE(r.output.find("not all workers joined"), std::string::npos) << r.output;
}

TEST(BadInput, PortInUse) {
  const testing::ListeningSocket someone_else;  // listens on the port for the whole run
  auto r = run_command(tula_binary() + " train --nproc 2 --rendezvous-timeout 10 --master-port " +
                           std::to_string(someone_else.port()) + kQuick,
                       90);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: " << r.output;
  EXPECT_NE(r.output.find("in use"), std::string::npos) << r.output;
}

// Rank 0 is killed once the job has completed a training step (the metrics
// file shows one), so the other worker is mid-run, in or between collectives
// with it. Rank 0, because the launcher reports the first dead worker in rank
// order: rank 1 may die of the loss of its peer (SIGPIPE on the dead socket)
// before the launcher looks, and must not be taken for the cause.
TEST(BadInput, WorkerKilledMidRun) {
  const testing::TempDir dir("tula-killed");
  CommandResult r;
  ASSERT_TRUE(with_free_port([&](int port) {
    const std::string metrics = dir.file("metrics-" + std::to_string(port) + ".jsonl");
    const std::string launch = tula_binary() + " train --nproc 2 --epochs 1000 --no-eval --collective-timeout 30" +
                               " --metrics " + metrics + " --master-port " + std::to_string(port) + kQuick;
    // The launcher goes down with the script, whatever ends it.
    r = run_command(launch + " & L=$!; trap \"kill $L 2>/dev/null\" EXIT; " +
                        testing::shell_wait_until("grep -q step_in_epoch " + metrics + " 2>/dev/null || ! kill -0 $L 2>/dev/null",
                                                  "a training step (or the launcher to exit)") +
                        "for W in $(pgrep -P $L); do grep -qxz RANK=0 /proc/$W/environ && kill -9 $W; done; " +
                        "wait $L; echo launcher-exit=$?",
                    180);
    return !says_port_in_use(r.output);
  }));
  EXPECT_NE(r.output.find("launcher-exit=137"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("worker rank 0 (pid "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("killed by signal 9"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::cli
