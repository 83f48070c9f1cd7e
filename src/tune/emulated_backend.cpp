// The emulated backend: a launch's workers on nodes of the emulated cluster
// (scripts/emulated-cluster), one `tula launch --nnodes N --node-rank K` per
// node, each started inside its node's cgroups and network namespace
// (common::SpawnOptions::cgroups, network_namespace). The workers inherit
// both, so they compute at the node's CPU share and reach each other over
// the shaped links only: the rendezvous is at node 0's address on the
// bridge, and Gloo binds the address on the route to it
// (distributed/communicator.cpp). Each node's launcher logs to its own file,
// which the launch's log names. When one node's launcher fails the others
// are stopped (SIGTERM, SIGKILL after a grace), so a launch ends as a whole
// and a node whose peer died does not wait out its rendezvous timeout.
// Entering a network namespace needs root (CAP_SYS_ADMIN).
// No LibTorch here.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "common/tcp_port.hpp"
#include "tune/backend.hpp"
#include "tune/child_process.hpp"
#include "tune/emulated_cluster.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After one node failed, how long the others get to stop on SIGTERM.
constexpr milliseconds kStopOthersGrace{std::chrono::seconds(30)};
// How long wait_for watches one node before looking at the next.
constexpr milliseconds kSlice{100};

struct NodeLauncher {
  EmulatedNode node;
  std::string log_path;
  common::Child child;
};

// launch-3.log -> launch-3.tula-emu-n1.log
std::string node_log_path(const std::string& launch_log, const std::string& node) {
  fs::path p(launch_log);
  p.replace_extension();
  p += "." + node + ".log";
  return p.string();
}

EmulatedCluster read_cluster(const std::string& path) {
  try {
    return read_emulated_cluster(path);
  } catch (const std::runtime_error& e) {
    throw BackendError(e.what());
  }
}

class EmulatedLaunch : public RunningLaunch {
 public:
  explicit EmulatedLaunch(std::vector<NodeLauncher> launchers) : launchers_(std::move(launchers)) {}

  std::optional<LaunchExit> wait_for(milliseconds timeout) override {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      note_ends();
      if (failure_) stop_the_others();
      NodeLauncher* running = first_running();
      if (running == nullptr) return failure_ ? failure_ : LaunchExit{0, "every node's workers exited 0"};
      const auto now = Clock::now();
      if (now >= deadline) return std::nullopt;
      running->child.wait_for(std::min(kSlice, std::chrono::ceil<milliseconds>(deadline - now)));
    }
  }

  void request_stop() override { signal_all(SIGTERM); }
  void kill() override { signal_all(SIGKILL); }

  std::string where() const override {
    std::string nodes;
    for (const auto& l : launchers_) nodes += (nodes.empty() ? "" : ", ") + l.node.name;
    return "emulated " + launchers_.front().node.machine_type + " nodes " + nodes;
  }

  nlohmann::json handle() const override {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& l : launchers_) nodes.push_back({{"node", l.node.name}, {"pid", l.child.pid()}});
    return {{"backend", "emulated"}, {"launchers", nodes}};
  }

 private:
  // The first node whose launcher failed, in the order their ends were seen.
  void note_ends() {
    for (auto& l : launchers_) {
      const auto status = l.child.try_wait();
      if (!status || status->success() || failure_) continue;
      const std::string last = common::last_line_of(l.log_path);
      failure_ = LaunchExit{status->is_known() ? status->exit_code() : 1,
                            "node " + l.node.name + ": " + status->describe() + (last.empty() ? "" : ": " + last)};
    }
  }

  void stop_the_others() {
    if (!stop_sent_) {
      signal_all(SIGTERM);
      stop_sent_ = true;
      kill_at_ = Clock::now() + kStopOthersGrace;
    } else if (Clock::now() >= kill_at_) {
      signal_all(SIGKILL);
    }
  }

  NodeLauncher* first_running() {
    for (auto& l : launchers_) {
      if (!l.child.status()) return &l;
    }
    return nullptr;
  }

  // To each launcher, which passes SIGTERM on to its workers.
  void signal_all(int sig) {
    for (auto& l : launchers_) l.child.signal(sig);
  }

  std::vector<NodeLauncher> launchers_;
  std::optional<LaunchExit> failure_;
  bool stop_sent_ = false;
  Clock::time_point kill_at_;
};

class EmulatedBackend : public Backend {
 public:
  explicit EmulatedBackend(BackendOptions options) : options_(std::move(options)) {
    if (options_.cluster_state.empty()) options_.cluster_state = kDefaultClusterState;
  }
  std::string name() const override { return "emulated"; }
  bool places_nodes() const override { return true; }

  void check_available() const override {
    if (::geteuid() != 0) {
      throw BackendError("the emulated backend places workers into the nodes' network namespaces, which needs root");
    }
    if (::access(options_.tula_binary.c_str(), X_OK) != 0) {
      throw BackendError("the emulated backend cannot run " + options_.tula_binary + ": " + std::strerror(errno));
    }
    for (const auto& node : read_cluster(options_.cluster_state).nodes) check_present(node);
  }

  std::vector<std::string> fit_catalog(plan::Catalog& catalog) const override {
    const auto cluster = read_cluster(options_.cluster_state);
    std::vector<std::string> notes;
    std::vector<plan::MachineType> kept;
    for (auto& m : catalog.machines) {
      const auto count = static_cast<int64_t>(cluster.nodes_of_type(m.spec.name).size());
      if (count == 0) {
        notes.push_back("machine type " + m.spec.name + " has no node in the emulated cluster (" + cluster.path +
                        "): not planned");
        continue;
      }
      if (count < m.max_nodes) {
        notes.push_back(fmt::format("machine type {}: planned on the {} nodes the emulated cluster has, not the "
                                    "catalog's {}",
                                    m.spec.name, count, m.max_nodes));
        m.max_nodes = count;
      }
      kept.push_back(m);
    }
    if (kept.empty()) {
      throw BackendError("no machine type of the catalog has a node in the emulated cluster (" + cluster.path +
                         "); start the cluster from the same catalog");
    }
    catalog.machines = std::move(kept);
    return notes;
  }

  std::unique_ptr<RunningLaunch> start(const WorkerLaunch& launch) override {
    check_available();
    if (launch.nodes < 1 || launch.workers < launch.nodes || launch.workers % launch.nodes != 0) {
      throw BackendError(fmt::format("a launch of {} workers cannot be spread evenly over {} nodes", launch.workers,
                                     launch.nodes));
    }
    auto nodes = read_cluster(options_.cluster_state).nodes_of_type(launch.machine_type);
    if (nodes.size() < static_cast<size_t>(launch.nodes)) {
      throw BackendError(fmt::format("the emulated cluster has {} nodes of type '{}'; the launch needs {}",
                                     nodes.size(), launch.machine_type, launch.nodes));
    }
    nodes.resize(static_cast<size_t>(launch.nodes));
    const int port = common::free_tcp_port();
    std::ofstream(launch.log_path, std::ios::app) << describe_placement(launch, nodes);
    std::vector<NodeLauncher> launchers;
    for (size_t rank = 0; rank < nodes.size(); ++rank) {
      launchers.push_back(start_node(launch, nodes, rank, port));
    }
    return std::make_unique<EmulatedLaunch>(std::move(launchers));
  }

 private:
  void check_present(const EmulatedNode& node) const {
    if (::access(node.netns.c_str(), F_OK) != 0) {
      throw BackendError("node " + node.name + "'s network namespace " + node.netns +
                         " is gone; restart the emulated cluster (scripts/emulated-cluster stop, start)");
    }
    for (const auto& cgroup : node.cgroups) {
      if (!fs::is_directory(cgroup)) {
        throw BackendError("node " + node.name + "'s cgroup " + cgroup +
                           " is gone; restart the emulated cluster (scripts/emulated-cluster stop, start)");
      }
    }
  }

  // One line per node, so the launch's log says where its workers ran.
  static std::string describe_placement(const WorkerLaunch& launch, const std::vector<EmulatedNode>& nodes) {
    std::string text;
    for (size_t rank = 0; rank < nodes.size(); ++rank) {
      const auto& n = nodes[rank];
      text += fmt::format("emulated node {}: {} ({}, {}), log {}\n", rank, n.name, n.machine_type, n.address,
                          node_log_path(launch.log_path, n.name));
    }
    return text;
  }

  NodeLauncher start_node(const WorkerLaunch& launch, const std::vector<EmulatedNode>& nodes, size_t rank,
                          int port) const {
    const auto& node = nodes[rank];
    std::vector<std::string> argv = {options_.tula_binary, "launch",
                                     "--nproc", std::to_string(launch.workers / launch.nodes),
                                     "--nnodes", std::to_string(launch.nodes),
                                     "--node-rank", std::to_string(rank),
                                     "--master-addr", nodes.front().address,
                                     "--master-port", std::to_string(port), "--"};
    argv.insert(argv.end(), launch.worker_command.begin(), launch.worker_command.end());
    const std::string log = node_log_path(launch.log_path, node.name);
    try {
      return {node, log,
              common::Child(argv, child_process_options(log, launch.work_dir)
                                      .cgroups(node.cgroups)
                                      .network_namespace(node.netns))};
    } catch (const std::system_error& e) {
      // The nodes started before this one go with their Child objects (SIGKILL).
      throw BackendError("cannot start the workers of node " + node.name + ": " + e.what());
    }
  }

  BackendOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_emulated_backend(const BackendOptions& options) {
  return std::make_unique<EmulatedBackend>(options);
}

}  // namespace tula::tune
