// Two hosts as two network namespaces joined by a veth pair: distinct
// addresses and a real TCP link between them, while inside each namespace the
// hostname still resolves to 127.0.0.1 (as in many containers). A job that
// binds its collectives to the hostname's address fails here. Needs root and
// iproute2; skipped where the namespaces cannot be made.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "helpers/run_command.hpp"
#include "common/remove_tree.hpp"

namespace {

namespace fs = std::filesystem;
using tula::testing::run_command;
using tula::testing::tula_binary;

class NamespaceHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
    const std::string id = std::to_string(::getpid() % 100000);
    ns_[0] = "tula-t" + id + "a";
    ns_[1] = "tula-t" + id + "b";
    subnet_ = "10.79." + std::to_string(::getpid() % 250) + ".";
    const std::string va = "tv" + id + "a", vb = "tv" + id + "b";
    const auto made = run_command(
        "ip netns add " + ns_[0] + " && ip netns add " + ns_[1] + " && ip link add " + va +
            " type veth peer name " + vb + " && ip link set " + va + " netns " + ns_[0] + " && ip link set " + vb +
            " netns " + ns_[1] + " && ip -n " + ns_[0] + " addr add " + subnet_ + "1/24 dev " + va + " && ip -n " +
            ns_[1] + " addr add " + subnet_ + "2/24 dev " + vb + " && ip -n " + ns_[0] + " link set " + va +
            " up && ip -n " + ns_[1] + " link set " + vb + " up && ip -n " + ns_[0] + " link set lo up && ip -n " +
            ns_[1] + " link set lo up",
        30);
    if (made.exit_code != 0) GTEST_SKIP() << "cannot make network namespaces here: " << made.output;
    made_ = true;
    std::string pattern = (fs::temp_directory_path() / "tula-ns-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }

  void TearDown() override {
    if (made_) run_command("ip netns del " + ns_[0] + "; ip netns del " + ns_[1], 30);
    if (!dir_.empty()) tula::common::remove_tree(dir_);
  }

  // `tula launch` of one worker on host `rank` of 2, training a few steps.
  std::string host_command(int rank, int port) const {
    return "ip netns exec " + ns_[rank] + " " + tula_binary() + " launch --nproc 1 --nnodes 2 --node-rank " +
           std::to_string(rank) + " --master-addr " + subnet_ + "1 --master-port " + std::to_string(port) + " -- " +
           tula_binary() +
           " train --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 64"
           " --batch-size 8 --max-steps 3 --no-eval --progress none --threads 1 --rendezvous-timeout 30"
           " --collective-timeout 30 --metrics " + (dir_ / ("m" + std::to_string(rank) + ".jsonl")).string();
  }

  std::string ns_[2];
  std::string subnet_;
  fs::path dir_;
  bool made_ = false;
};

TEST_F(NamespaceHosts, TwoHostsTrainOverTheLinkBetweenThem) {
  const int port = 29000 + ::getpid() % 1000;
  const auto r = run_command(host_command(0, port) + " & p=$!; " + host_command(1, port) +
                                 "; r1=$?; wait $p; r0=$?; exit $((r0 | r1))",
                             120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream metrics(dir_ / "m0.jsonl");
  std::string line;
  int steps = 0;
  bool two_workers = false;
  while (std::getline(metrics, line)) {
    if (line.find("\"type\":\"iter\"") != std::string::npos) ++steps;
    if (line.find("\"workers\":2") != std::string::npos) two_workers = true;
  }
  EXPECT_EQ(steps, 3);
  EXPECT_TRUE(two_workers) << "the start record should count both hosts' workers";
}

}  // namespace
