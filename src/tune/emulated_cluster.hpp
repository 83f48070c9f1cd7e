// The emulated cluster as `scripts/emulated-cluster start` left it: its
// nodes (a network namespace and cgroups each, an address on the bridge) and
// their machine types, read from the state file the script writes
// ("tula-emulated-cluster", version 1; docs/formats.md).
// No LibTorch here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tula::tune {

// Where `scripts/emulated-cluster start` writes the state with its default prefix.
inline constexpr const char* kDefaultClusterState = "/run/tula-emu/state.json";

struct EmulatedNode {
  std::string name;          // its network namespace's name: tula-emu-n0
  std::string machine_type;  // a catalog machine type
  std::string address;       // on the bridge, reached from every other node
  std::string netns;         // /run/netns/<name>
  std::string host_link;     // the host end of its veth pair, on the bridge
  std::vector<std::string> cgroups;  // the directories its processes join
  double cpus = 0;           // its CPU quota, in CPUs
};

struct EmulatedCluster {
  std::string path;  // the state file
  std::string prefix;
  bool latency_emulated = false;  // false: links have their bandwidth, not the catalog's latency
  std::string slurm_conf;         // the slurm.conf of its Slurm (empty: started without Slurm)
  std::vector<EmulatedNode> nodes;

  // The nodes of one machine type, in the order the script made them.
  std::vector<EmulatedNode> nodes_of_type(const std::string& machine_type) const;
};

// Throws std::runtime_error naming the file and the field: missing (the
// cluster is not up), not the cluster's format, a node without its address.
EmulatedCluster read_emulated_cluster(const std::string& path);

}  // namespace tula::tune
