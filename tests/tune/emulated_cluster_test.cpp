// The emulated cluster's state file as the script writes it, and what the
// emulated backend makes of it without starting anything: the catalog cut to
// the nodes there are, and the errors that name what is missing. Starting
// workers on real nodes is tests/cluster's.
#include "tune/emulated_cluster.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "helpers/temp_dir.hpp"
#include "plan/catalog.hpp"
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

plan::Catalog two_type_catalog() {
  json types = json::array();
  for (const auto& [name, max_nodes] : {std::pair{"emu-half", 4}, std::pair{"emu-one", 3}}) {
    types.push_back({{"name", name},
                     {"device_kind", "cpu"},
                     {"device_memory_gib", 2},
                     {"price_per_hour", 0.1},
                     {"network_gbps", 1},
                     {"max_nodes", max_nodes},
                     {"relative_speed", 0.5}});
  }
  return plan::catalog_from_json({{"format", "tula-catalog"}, {"version", 1}, {"machine_types", types}});
}

TEST(EmulatedBackend, PlansOnlyOverTheNodesTheClusterHas) {
  TempDir dir;
  BackendOptions options;
  options.cluster_state = write(dir, two_node_state());
  const auto backend = make_backend("emulated", options);
  EXPECT_TRUE(backend->places_nodes());
  auto catalog = two_type_catalog();
  const auto notes = backend->fit_catalog(catalog);
  ASSERT_EQ(catalog.machines.size(), 1u);
  EXPECT_EQ(catalog.machines[0].spec.name, "emu-one");
  EXPECT_EQ(catalog.machines[0].max_nodes, 2) << "the catalog allows 3; the cluster has 2";
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("emu-half has no node"), std::string::npos) << notes[0];
}

TEST(EmulatedBackend, ACatalogOfOtherTypesOrNoClusterIsAnError) {
  TempDir dir;
  BackendOptions options;
  auto j = two_node_state();
  j["nodes"] = {node(0, "other")};
  options.cluster_state = write(dir, j);
  auto catalog = two_type_catalog();
  EXPECT_THROW(make_backend("emulated", options)->fit_catalog(catalog), BackendError);
  options.cluster_state = dir.file("missing.json");
  options.tula_binary = "/bin/true";
  try {
    make_backend("emulated", options)->check_available();
    ADD_FAILURE() << "a backend without a cluster was available";
  } catch (const BackendError& e) {
    EXPECT_TRUE(std::string(e.what()).find("needs root") != std::string::npos ||
                std::string(e.what()).find("is the cluster up?") != std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tula::tune
