// The emulated cluster's state file as the script writes it, and what the
// emulated backend makes of it without starting anything: the Slurm backend
// on the slurm.conf it names, and the errors that name what is missing.
// Starting workers on real nodes is tests/cluster's.
#include "tune/emulated_cluster.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "helpers/temp_dir.hpp"
#include "tune/backend.hpp"

namespace tula::tune {
namespace {

using nlohmann::json;
using testing::TempDir;

json node(int i, const std::string& type) {
  return {{"name", "tula-emu-n" + std::to_string(i)},
          {"machine_type", type},
          {"address", "10.77.0." + std::to_string(i + 1)},
          {"netns", "/run/netns/tula-emu-n" + std::to_string(i)},
          {"host_link", "tula-emu-v" + std::to_string(i)},
          {"cgroups", {"/sys/fs/cgroup/cpu/tula-emu/n" + std::to_string(i)}},
          {"cpuset", "0"},
          {"cpus", 1},
          {"network_gbps", 1},
          {"network_latency_us", 50}};
}

// Two one-core nodes, as TULA_CLUSTER_NODES=emu-one:2 makes them.
json two_node_state() {
  return {{"format", "tula-emulated-cluster"}, {"version", 1},       {"prefix", "tula-emu"},
          {"bridge", "tula-emu-br"},           {"cgroup_version", 1}, {"latency_emulated", false},
          {"nodes", {node(0, "emu-one"), node(1, "emu-one")}}};
}

std::string write(const TempDir& dir, const json& j) {
  const std::string path = dir.file("state.json");
  std::ofstream(path) << j.dump();
  return path;
}

std::string error_reading(const std::string& path) {
  try {
    read_emulated_cluster(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(EmulatedCluster, ReadsTheNodesTheScriptWrote) {
  TempDir dir;
  const auto cluster = read_emulated_cluster(write(dir, two_node_state()));
  ASSERT_EQ(cluster.nodes.size(), 2u);
  EXPECT_EQ(cluster.prefix, "tula-emu");
  EXPECT_FALSE(cluster.latency_emulated);
  EXPECT_EQ(cluster.nodes[1].address, "10.77.0.2");
  EXPECT_EQ(cluster.nodes[1].netns, "/run/netns/tula-emu-n1");
  EXPECT_EQ(cluster.nodes[1].cgroups, std::vector<std::string>{"/sys/fs/cgroup/cpu/tula-emu/n1"});
  EXPECT_EQ(cluster.nodes_of_type("emu-one").size(), 2u);
  EXPECT_TRUE(cluster.nodes_of_type("emu-half").empty());
}

TEST(EmulatedCluster, SaysWhatIsWrongWithTheStateFile) {
  TempDir dir;
  EXPECT_NE(error_reading(dir.file("none.json")).find("is the cluster up?"), std::string::npos);
  auto j = two_node_state();
  j["format"] = "tula-catalog";
  EXPECT_NE(error_reading(write(dir, j)).find("format"), std::string::npos);
  j = two_node_state();
  j["nodes"][1].erase("address");
  EXPECT_NE(error_reading(write(dir, j)).find("nodes[1].address"), std::string::npos);
  j = two_node_state();
  j["nodes"][0]["cgroups"] = json::array();
  EXPECT_NE(error_reading(write(dir, j)).find("nodes[0].cgroups"), std::string::npos);
}

// The emulated backend is the Slurm one on the cluster's own Slurm: it
// needs the state file and the slurm.conf it names. Planning and running on
// the nodes are tests/cluster's (EmulatedSlurm.*, EmulatedClusterJob.*).
TEST(EmulatedBackend, IsTheSlurmBackendOnTheClustersSlurm) {
  TempDir dir;
  BackendOptions options;
  auto j = two_node_state();
  j["slurm_conf"] = dir.file("slurm.conf");
  options.cluster_state = write(dir, j);
  const auto backend = make_backend("emulated", options);
  EXPECT_EQ(backend->name(), "emulated");
  EXPECT_TRUE(backend->places_nodes());
  EXPECT_EQ(read_emulated_cluster(options.cluster_state).slurm_conf, dir.file("slurm.conf"));
}

TEST(EmulatedBackend, NoClusterOrAClusterWithoutSlurmIsAnErrorThatSaysSo) {
  TempDir dir;
  BackendOptions options;
  options.cluster_state = dir.file("missing.json");
  try {
    make_backend("emulated", options);
    ADD_FAILURE() << "a backend without a cluster was made";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("is the cluster up?"), std::string::npos) << e.what();
  }
  options.cluster_state = write(dir, two_node_state());  // no slurm_conf: started with TULA_CLUSTER_SLURM=0
  try {
    make_backend("emulated", options);
    ADD_FAILURE() << "a backend on a cluster without Slurm was made";
  } catch (const BackendError& e) {
    EXPECT_NE(std::string(e.what()).find("names no slurm.conf: the emulated cluster was started without Slurm"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tula::tune
