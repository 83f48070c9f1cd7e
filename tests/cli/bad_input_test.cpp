// Bad input, as a user would meet it: each case ends promptly with a non-zero
// exit and a message that names the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"

namespace tula::cli {
namespace {

namespace fs = std::filesystem;
using testing::run_command;
using testing::tula_binary;

const std::string kQuick =
    " --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 256 --progress none --threads 1";

void expect_failure(const std::string& args, const std::string& message, int timeout = 60) {
  auto r = run_command(tula_binary() + " " + args, timeout);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: " << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << "expected '" << message << "' in:\n" << r.output;
}

TEST(BadInput, EverySubcommandHasHelp) {
  for (const std::string sub : {"", " train", " launch", " models"}) {
    auto r = run_command(tula_binary() + sub + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << sub;
  }
}

TEST(BadInput, MissingDataDirectory) {
  expect_failure("train --dataset fashion-mnist --data-dir /nonexistent/fmnist --progress none",
                 "/nonexistent/fmnist");
}

TEST(BadInput, CorruptIdxFile) {
  const fs::path dir = fs::temp_directory_path() / ("tula-corrupt-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const std::string name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                                 "t10k-labels-idx1-ubyte"}) {
    std::ofstream(dir / name) << "this is not an IDX file";
  }
  expect_failure("train --dataset fashion-mnist --progress none --data-dir " + dir.string(),
                 "train-images-idx3-ubyte");
  fs::remove_all(dir);
}

TEST(BadInput, UnknownModel) { expect_failure("train --model resnet9000" + kQuick, "resnet9000"); }

TEST(BadInput, BatchSizeZero) { expect_failure("train --batch-size 0" + kQuick, "--batch-size"); }

TEST(BadInput, BatchLargerThanDataSet) { expect_failure("train --batch-size 512" + kQuick, "exceeds"); }

TEST(BadInput, RendezvousThatNeverCompletes) {
  const std::string env = "RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                          std::to_string(testing::free_port());
  auto r = run_command(env + " " + tula_binary() + " train --rendezvous-timeout 3" + kQuick, 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << r.output;
  EXPECT_NE(r.output.find("not all workers joined"), std::string::npos) << r.output;
}

TEST(BadInput, PortInUse) {
  const int port = testing::free_port();
  // Something else listens on the port for the duration of the run.
  const std::string holder = "/usr/bin/python3 -c \"import socket,time; s=socket.socket(); "
                             "s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\\\"127.0.0.1\\\"," +
                             std::to_string(port) + ")); s.listen(); time.sleep(40)\" & H=$!; sleep 1; ";
  auto r = run_command(holder + tula_binary() + " train --nproc 2 --rendezvous-timeout 10 --master-port " +
                           std::to_string(port) + kQuick + "; status=$?; kill $H; exit $status",
                       90);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("in use"), std::string::npos) << r.output;
}

TEST(BadInput, WorkerKilledMidRun) {
  const std::string cmd = tula_binary() + " train --nproc 2 --epochs 1000 --no-eval --collective-timeout 30 --master-port " +
                          std::to_string(testing::free_port()) + kQuick +
                          " & L=$!; sleep 8; W=$(pgrep -P $L | tail -n 1); kill -9 $W; wait $L; echo launcher-exit=$?";
  auto r = run_command(cmd, 120);
  EXPECT_NE(r.output.find("launcher-exit=137"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("killed by signal 9"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::cli
