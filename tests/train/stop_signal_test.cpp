// A worker told to stop (SIGINT from a terminal, SIGTERM from a scheduler)
// finishes its step, checkpoints there and exits 128 + the signal; still in
// its set-up, it ends at once instead of waiting for peers.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/child_process.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// One worker with epochs to spare: only a signal ends it within the test.
std::string endless_run(const testing::TempDir& dir) {
  return testing::tula_binary() +
         " train --model small_cnn --dataset synthetic --synthetic-size 256 --synthetic-shape 1x28x28"
         " --batch-size 8 --no-eval --threads 1 --progress none --epochs 1000 --metrics " +
         dir.file("metrics.jsonl");
}

struct Stopped {
  int exit_code = -1;
  bool signaled = false;  // died of the signal instead of exiting
  std::string output;
};

// Starts `command`, sends `sig` once its metrics show step 2 done, and
// returns how it ended and what it printed.
Stopped stop_after_two_steps(const std::string& command, const testing::TempDir& dir, int sig) {
  testing::ChildProcess run(testing::words(command), dir.file("run.log"));
  const fs::path metrics = dir.file("metrics.jsonl");
  const auto reached = testing::eventually(
      [&] { return testing::last_iter_step(testing::metrics_records(metrics)) >= 2 || run.ended(); },
      "step 2 in " + metrics.string(), 300s);
  if (!reached || run.ended()) {
    ADD_FAILURE() << (reached ? "the run ended before the signal" : reached.message()) << "\n" << run.output();
    return {};
  }
  EXPECT_TRUE(run.send(sig));
  Stopped r;
  r.exit_code = run.wait();
  r.signaled = run.signaled();
  r.output = run.output();
  return r;
}

TEST(StopOnSignal, SingleWorkerStopsOnSigintWithACheckpoint) {
  const testing::TempDir dir("tula-stop");
  const auto r =
      stop_after_two_steps(endless_run(dir) + " --checkpoint-dir " + dir.file("ckpt"), dir, SIGINT);
  ASSERT_EQ(r.exit_code, 128 + SIGINT) << r.output;
  EXPECT_FALSE(r.signaled) << "it should exit after a step, not die of the signal";
  EXPECT_NE(r.output.find("\"stopped_by_signal\":\"SIGINT\""), std::string::npos) << r.output;

  const auto records = testing::metrics_records(dir.file("metrics.jsonl"));
  const auto stopped = testing::records_of(records, "stopped");
  ASSERT_EQ(stopped.size(), 1u) << r.output;
  EXPECT_EQ(stopped[0]["signal"], "SIGINT");
  EXPECT_EQ(stopped[0]["checkpointed"], true);
  const int64_t step = stopped[0]["step"].get<int64_t>();
  EXPECT_GE(step, 2);
  EXPECT_EQ(testing::last_iter_step(records), step);
  const auto state = nlohmann::json::parse(testing::read_text(fs::path(dir.file("ckpt")) / "latest.json"));
  EXPECT_EQ(state["global_step"], step);
  EXPECT_EQ(state["step_in_epoch"], stopped[0]["step_in_epoch"]);
}

TEST(StopOnSignal, WithoutACheckpointDirectoryTheRecordSaysNothingWasSaved) {
  const testing::TempDir dir("tula-stop");
  const auto r = stop_after_two_steps(endless_run(dir), dir, SIGTERM);
  ASSERT_EQ(r.exit_code, 128 + SIGTERM) << r.output;
  const auto stopped = testing::records_of(testing::metrics_records(dir.file("metrics.jsonl")), "stopped");
  ASSERT_EQ(stopped.size(), 1u) << r.output;
  EXPECT_EQ(stopped[0]["signal"], "SIGTERM");
  EXPECT_EQ(stopped[0]["checkpointed"], false);
}

// A TCP server on a loopback port that accepts connections and never
// answers: a rendezvous master that keeps a worker waiting.
class SilentServer {
 public:
  SilentServer() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) {
    if (fd_ < 0) throw std::runtime_error("SilentServer: socket failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd_);
      throw std::runtime_error("SilentServer: cannot listen on a loopback port");
    }
    port_ = ntohs(addr.sin_port);
  }
  ~SilentServer() {
    for (const int fd : accepted_) ::close(fd);
    ::close(fd_);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  int port() const { return port_; }
  // True once some client has connected (and been accepted).
  bool accept_one() {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) accepted_.push_back(fd);
    return !accepted_.empty();
  }

 private:
  int fd_;
  int port_ = 0;
  std::vector<int> accepted_;
};

// Rank 1 of two, its master silent: it has installed its handlers and sits
// in the rendezvous, which would wait out --rendezvous-timeout (10 min). A
// SIGTERM ends it at once, by the signal, as a worker without handlers.
TEST(StopOnSignal, SignalDuringTheRendezvousEndsTheWorkerAtOnce) {
  const testing::TempDir dir("tula-stop");
  SilentServer master;
  testing::ChildProcess worker(
      testing::words("/usr/bin/env RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1"
                     " MASTER_PORT=" + std::to_string(master.port()) + " " + endless_run(dir) +
                     " --rendezvous-timeout 600"),
      dir.file("worker.log"));
  ASSERT_TRUE(testing::eventually([&] { return master.accept_one() || worker.ended(); },
                                  "the worker to connect to the rendezvous", 300s))
      << worker.output();
  ASSERT_FALSE(worker.ended()) << worker.output();
  ASSERT_TRUE(worker.send(SIGTERM));
  EXPECT_EQ(worker.wait(), 128 + SIGTERM) << worker.output();
  EXPECT_TRUE(worker.signaled()) << "it should die of the signal, not stop at a step:\n" << worker.output();
}

}  // namespace
}  // namespace tula::train
