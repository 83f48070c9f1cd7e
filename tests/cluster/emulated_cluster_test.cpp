// The emulated backend (the Slurm backend on the cluster's own Slurm) on a
// real emulated cluster of two one-core nodes, which ctest's
// emulated_cluster_start fixture makes (scripts/emulated-cluster, under a
// prefix and subnet of this build's own) and emulated_cluster_stop
// removes, whatever the tests did. A two-node job trains a few steps; each
// worker records, before it becomes `tula train`, which network namespace and
// cgroups it runs in, and the bytes through the nodes' links show that the
// workers talked over them. Needs root, network namespaces and a cgroup cpu
// controller; the job's tests skip, saying why, where the cluster could not
// start. The script's own refusals need none of that.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/backend.hpp"
#include "tune/emulated_cluster.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_command;
using testing::TempDir;
using testing::tula_binary;

// Two workers start LibTorch side by side on one-core nodes of a machine that
// may be busy: their first step can take a while, never minutes.
constexpr std::chrono::milliseconds kJobPatience{std::chrono::minutes(4)};

const std::string kState = TULA_TEST_CLUSTER_STATE;
const std::string kScript = std::string(TULA_SOURCE_DIR) + "/scripts/emulated-cluster";

uint64_t link_bytes(const std::string& link) {
  uint64_t total = 0;
  for (const char* counter : {"rx_bytes", "tx_bytes"}) {
    total += std::stoull("0" + read_text("/sys/class/net/" + link + "/statistics/" + counter));
  }
  return total;
}

// "net:[4026532xxx]", as readlink /proc/self/ns/net prints it for a process in `netns`.
std::string namespace_link(const std::string& netns) {
  struct stat st {};
  if (::stat(netns.c_str(), &st) != 0) return "(no " + netns + ")";
  return "net:[" + std::to_string(st.st_ino) + "]";
}

// Whether a /proc/PID/cgroup text places the process in `cgroup`: the line
// "4:cpu:/tt1a2b3c/n0" for /sys/fs/cgroup/cpu/tt1a2b3c/n0 (v1, a hierarchy
// per controller), "0::/tt1a2b3c/n0" for /sys/fs/cgroup/tt1a2b3c/n0 (v2).
bool places_in(const std::string& proc_cgroup, const std::string& cgroup) {
  const std::string root = "/sys/fs/cgroup/";
  if (cgroup.rfind(root, 0) != 0) return false;
  std::string wanted;
  if (fs::exists(root + "cgroup.controllers")) {
    wanted = "0::/" + cgroup.substr(root.size());
  } else {
    const std::string rest = cgroup.substr(root.size());
    const size_t slash = rest.find('/');
    wanted = ":" + rest.substr(0, slash) + ":" + rest.substr(slash);
  }
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    if (line.size() >= wanted.size() && line.compare(line.size() - wanted.size(), wanted.size(), wanted) == 0) {
      return true;
    }
  }
  return false;
}

class EmulatedClusterJob : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kState)) {
      const std::string why = read_text(fs::path(kState).parent_path() / "start-failure");
      GTEST_SKIP() << "the emulated cluster is not up (ctest's emulated_cluster_start): "
                   << (why.empty() ? "no " + kState + " (not root?)" : why);
    }
    cluster_ = read_emulated_cluster(kState);
    nodes_ = cluster_.nodes_of_type("emu-one");
    ASSERT_EQ(nodes_.size(), 2u) << "the fixture makes two emu-one nodes";
  }

  // Records where it runs in `dir`, then becomes a three-step `tula train`.
  std::vector<std::string> recording_worker(const TempDir& dir) const {
    return {"/bin/sh", "-c",
            "readlink /proc/self/ns/net > \"$0/netns.$SLURM_PROCID\" && "
            "cat /proc/self/cgroup > \"$0/cgroup.$SLURM_PROCID\" && "
            "exec \"$@\"",
            dir.str(), tula_binary(), "train", "--model", "small_cnn", "--dataset", "synthetic",
            "--synthetic-shape", "1x28x28", "--synthetic-size", "64", "--batch-size", "8", "--max-steps", "3",
            "--no-eval", "--progress", "none", "--rendezvous-timeout", "120", "--collective-timeout", "120",
            "--metrics", dir.file("metrics.jsonl")};
  }

  EmulatedCluster cluster_;
  std::vector<EmulatedNode> nodes_;
};

TEST_F(EmulatedClusterJob, TwoNodesTrainInTheirNamespacesAndCgroupsOverTheirLinks) {
  TempDir dir;
  BackendOptions options;
  options.tula_binary = tula_binary();
  options.cluster_state = kState;
  const auto backend = make_backend("emulated", options);
  ASSERT_NO_THROW(backend->check_available());
  const uint64_t before[2] = {link_bytes(nodes_[0].host_link), link_bytes(nodes_[1].host_link)};

  WorkerLaunch launch;
  launch.workers = 2;
  launch.nodes = 2;
  launch.machine_type = "emu-one";
  launch.worker_command = recording_worker(dir);
  launch.log_path = dir.file("launch.log");
  launch.work_dir = dir.str();
  const auto running = backend->start(launch);
  const auto exit = running->wait_for(kJobPatience);
  if (!exit) running->kill();
  ASSERT_TRUE(exit) << "the job did not end within " << kJobPatience.count() / 1000 << " s; " << running->where();
  ASSERT_EQ(exit->exit_code, 0) << exit->description << "\n" << read_text(launch.log_path);
  // Through the cluster's Slurm: a batch job, its tasks started by each node's slurmd.
  EXPECT_EQ(running->where().rfind("slurm job ", 0), 0u) << running->where();

  for (int rank = 0; rank < 2; ++rank) {
    const auto& node = nodes_[static_cast<size_t>(rank)];
    EXPECT_EQ(read_text(dir.file("netns." + std::to_string(rank))), namespace_link(node.netns) + "\n")
        << "rank " << rank << " should run in " << node.netns;
    const std::string cgroups = read_text(dir.file("cgroup." + std::to_string(rank)));
    for (const auto& cgroup : node.cgroups) {
      EXPECT_TRUE(places_in(cgroups, cgroup)) << "rank " << rank << " should run in " << cgroup << ":\n" << cgroups;
    }
    // The rendezvous and three steps' gradients crossed both nodes' links.
    EXPECT_GT(link_bytes(node.host_link) - before[rank], 64u * 1024) << node.host_link;
  }
  const std::string metrics = read_text(dir.file("metrics.jsonl"));
  EXPECT_NE(metrics.find("\"workers\":2"), std::string::npos) << metrics;
}

TEST_F(EmulatedClusterJob, TooFewNodesOfTheTypeIsAnError) {
  TempDir dir;
  BackendOptions options;
  options.tula_binary = tula_binary();
  options.cluster_state = kState;
  WorkerLaunch launch;
  launch.workers = 3;
  launch.nodes = 3;
  launch.machine_type = "emu-one";
  launch.worker_command = {"/bin/true"};
  launch.log_path = dir.file("launch.log");
  launch.work_dir = dir.str();
  // The cluster's partition takes the job (EnforcePartLimits=NO) and leaves
  // it pending for ever (Reason=PartitionConfig): the launch fails at its
  // first look instead of waiting.
  const auto running = make_backend("emulated", options)->start(launch);
  const auto exit = running->wait_for(kJobPatience);
  if (!exit) running->kill();
  ASSERT_TRUE(exit) << "a launch of three nodes on a cluster of two waited";
  EXPECT_NE(exit->exit_code, 0);
  EXPECT_NE(exit->description.find("cannot start: Partition"), std::string::npos) << exit->description;
}

// Refusals that come before anything is made: no root needed.
TEST(EmulatedClusterScript, NamesWhatIsWrongWithItsInput) {
  auto r = run_command("TULA_CLUSTER_PREFIX=Bad_Prefix " + kScript + " start", 60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("TULA_CLUSTER_PREFIX 'Bad_Prefix' must be"), std::string::npos) << r.output;
  r = run_command(kScript + " restart", 60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("usage:"), std::string::npos) << r.output;
  r = run_command("TULA_CLUSTER_PREFIX=tula-none TULA_CLUSTER_DIR=/nonexistent/tula " + kScript + " status", 60);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no emulated cluster with prefix tula-none"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::tune
