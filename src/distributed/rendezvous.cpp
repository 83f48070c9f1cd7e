#include "distributed/rendezvous.hpp"

#include <charconv>
#include <initializer_list>
#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace tula::distributed {
namespace {

std::string quoted(const std::string& name, const std::string& value) {
  return name + "=\"" + value + "\"";
}

[[noreturn]] void reject(const std::string& name, const std::string& value,
                         const std::string& why) {
  throw std::invalid_argument("invalid " + quoted(name, value) + ": " + why);
}

// Strict decimal: no sign, no spaces, no trailing text. A launcher that
// writes "1 " or "0x1" has a bug we want to hear about, not paper over.
std::optional<long long> to_int(std::string_view text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  long long parsed = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return parsed;
}

int parse_int(const std::string& name, const std::string& value, int min,
              int max = INT_MAX) {
  const std::string expected = max == INT_MAX ? fmt::format("expected an integer >= {}", min)
                                              : fmt::format("expected an integer in [{}, {}]", min, max);
  const auto parsed = to_int(value);
  if (!parsed || *parsed < min || *parsed > max) reject(name, value, expected);
  return static_cast<int>(*parsed);
}

class Env {
 public:
  explicit Env(const EnvLookup& lookup) : lookup_(lookup) {}

  std::optional<std::string> get(const std::string& name) const { return lookup_(name); }
  bool has(const std::string& name) const { return get(name).has_value(); }

  std::optional<int> get_int(const std::string& name, int min, int max = INT_MAX) const {
    auto value = get(name);
    if (!value) return std::nullopt;
    return parse_int(name, *value, min, max);
  }

  int require_int(const std::string& name, int min, const std::string& because) const {
    auto value = get_int(name, min);
    if (!value) throw std::invalid_argument(name + " is not set (" + because + ")");
    return *value;
  }

  // The first of `names` that is set, with its name.
  std::optional<std::pair<std::string, std::string>> first_of(
      std::initializer_list<const char*> names) const {
    for (const char* name : names) {
      if (auto value = get(name)) return std::make_pair(std::string(name), *value);
    }
    return std::nullopt;
  }

 private:
  const EnvLookup& lookup_;
};

// Names of the variables a source read, so errors point at what to fix.
struct Names {
  std::string rank, world_size, local_rank, local_world_size;
};

void check_consistent(const RendezvousInfo& info, const Names& names) {
  if (info.rank >= info.world_size) {
    throw std::invalid_argument(fmt::format("invalid {}={}: must be below {}={}", names.rank, info.rank,
                                            names.world_size, info.world_size));
  }
  if (info.local_world_size > info.world_size) {
    throw std::invalid_argument(fmt::format("invalid {}={}: more workers on this node than {}={} in the whole job",
                                            names.local_world_size, info.local_world_size, names.world_size,
                                            info.world_size));
  }
  if (info.local_rank >= info.local_world_size) {
    throw std::invalid_argument(fmt::format("invalid {}={}: must be below {}={}", names.local_rank, info.local_rank,
                                            names.local_world_size, info.local_world_size));
  }
}

// MASTER_ADDR/MASTER_PORT win over whatever a source implies.
void apply_master_overrides(const Env& env, RendezvousInfo& info) {
  if (auto addr = env.get("MASTER_ADDR")) {
    if (addr->empty() || addr->find_first_of(" \t\n") != std::string::npos) {
      reject("MASTER_ADDR", *addr, "expected a host name or IP address");
    }
    info.master_addr = *addr;
  }
  if (auto port = env.get_int("MASTER_PORT", 1, 65535)) info.master_port = *port;
}

// A job whose workers span several nodes cannot meet on 127.0.0.1; failing
// here beats every non-master node timing out on its own loopback.
void require_master_addr_if_multinode(const Env& env, const RendezvousInfo& info,
                                      const Names& names) {
  if (env.has("MASTER_ADDR") || info.local_world_size == info.world_size) return;
  throw std::invalid_argument(
      fmt::format("MASTER_ADDR is not set, but the job spans several nodes ({}={} < {}={}); set MASTER_ADDR to "
                  "rank 0's host",
                  names.local_world_size, info.local_world_size, names.world_size, info.world_size));
}

// torchrun, or anyone exporting the same variables by hand. Local values
// default as for one contiguous block of ranks per node.
RendezvousInfo from_torchrun(const Env& env) {
  const Names names{"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"};
  RendezvousInfo info;
  info.source = "torchrun";
  info.rank = parse_int("RANK", *env.get("RANK"), 0);
  info.world_size = env.require_int("WORLD_SIZE", 1, "needed with RANK");
  info.local_world_size = env.get_int("LOCAL_WORLD_SIZE", 1).value_or(info.world_size);
  info.local_rank = env.get_int("LOCAL_RANK", 0).value_or(info.rank % info.local_world_size);
  check_consistent(info, names);
  require_master_addr_if_multinode(env, info, names);
  apply_master_overrides(env, info);
  return info;
}

RendezvousInfo from_openmpi(const Env& env) {
  const Names names{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"};
  RendezvousInfo info;
  info.source = "openmpi";
  info.rank = parse_int(names.rank, *env.get(names.rank), 0);
  info.world_size = env.require_int(names.world_size, 1, "needed with " + names.rank);
  info.local_world_size = env.get_int(names.local_world_size, 1).value_or(info.world_size);
  info.local_rank =
      env.get_int(names.local_rank, 0).value_or(info.rank % info.local_world_size);
  check_consistent(info, names);
  require_master_addr_if_multinode(env, info, names);
  apply_master_overrides(env, info);
  return info;
}

// One run of Slurm's tasks-per-node syntax: "4(x2)" is {4, 2}, "3" is {3, 1}.
struct TasksRun {
  int tasks;
  int nodes;
};

// "2(x3),1" -> {{2, 3}, {1, 1}}: the tasks on each node of the job or step.
std::vector<TasksRun> parse_tasks_per_node(const std::string& name, const std::string& value) {
  auto bad = [&]() {
    reject(name, value, "expected comma-separated entries like \"4\" or \"4(x2)\"");
  };
  std::vector<TasksRun> runs;
  std::string_view rest = value;
  while (true) {
    const size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const size_t paren = item.find('(');
    std::optional<long long> tasks = to_int(item.substr(0, paren));
    std::optional<long long> nodes = 1;
    if (paren != std::string_view::npos) {
      if (item.substr(paren, 2) != "(x" || item.back() != ')') bad();
      nodes = to_int(item.substr(paren + 2, item.size() - paren - 3));
    }
    if (!tasks || !nodes || *tasks > INT_MAX || *nodes < 1 || *nodes > INT_MAX) bad();
    runs.push_back({static_cast<int>(*tasks), static_cast<int>(*nodes)});
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return runs;
}

// How many tasks share this node. The step's own list is exact; the user's
// request (SLURM_NTASKS_PER_NODE) and the job's list may describe a larger
// allocation than the step srun actually started.
int slurm_local_world_size(const Env& env, int world_size, std::string& used_name) {
  auto found =
      env.first_of({"SLURM_STEP_TASKS_PER_NODE", "SLURM_NTASKS_PER_NODE", "SLURM_TASKS_PER_NODE"});
  if (!found) {
    used_name = "SLURM_NTASKS";
    auto nodes = env.first_of({"SLURM_STEP_NUM_NODES", "SLURM_NNODES", "SLURM_JOB_NUM_NODES"});
    if (!nodes || parse_int(nodes->first, nodes->second, 1) == 1) return world_size;
    throw std::invalid_argument(
        "SLURM_NTASKS_PER_NODE is not set and the job has " + quoted(nodes->first, nodes->second) +
        " nodes: cannot tell how many tasks run on this node");
  }
  const auto& [name, value] = *found;
  used_name = name;
  const std::vector<TasksRun> runs = parse_tasks_per_node(name, value);
  bool uniform = true;
  for (const TasksRun& run : runs) uniform = uniform && run.tasks == runs.front().tasks;
  if (uniform) {
    if (runs.front().tasks < 1) reject(name, value, "no tasks on this node");
    return runs.front().tasks;
  }
  const int node = env.require_int("SLURM_NODEID", 0, name + "=\"" + value +
                                                          "\" differs between nodes");
  long long first_node = 0;
  for (const TasksRun& run : runs) {
    if (node < first_node + run.nodes) {
      if (run.tasks < 1) reject(name, value, fmt::format("no tasks on node {}", node));
      return run.tasks;
    }
    first_node += run.nodes;
  }
  throw std::invalid_argument(
      fmt::format("invalid SLURM_NODEID={}: {} lists only {} node(s)", node, quoted(name, value), first_node));
}

// `name` is the variable the list came from, or empty for a bare list.
std::string first_host(const std::string& name, const std::string& nodelist) {
  auto fail = [&](const std::string& why) {
    if (name.empty()) {
      throw std::invalid_argument("invalid Slurm node list \"" + nodelist + "\": " + why);
    }
    reject(name, nodelist, why);
  };
  if (nodelist.empty()) fail("empty node list");
  std::string host;
  size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',') {
    const char c = nodelist[i];
    if (c == ']') fail("unbalanced ']'");
    if (c == ' ' || c == '\t' || c == '\n') fail("unexpected white space");
    if (c != '[') {
      host += c;
      ++i;
      continue;
    }
    const size_t close = nodelist.find(']', i);
    if (close == std::string::npos) fail("unbalanced '['");
    const std::string_view ranges = std::string_view(nodelist).substr(i + 1, close - i - 1);
    // Check every range, not just the first: a malformed list usually means
    // the variable is not what we think it is.
    std::string_view first;
    std::string_view rest = ranges;
    while (true) {
      const size_t comma = rest.find(',');
      const std::string_view range = rest.substr(0, comma);
      const size_t dash = range.find('-');
      const std::string_view lo = range.substr(0, dash);
      const std::string_view hi = dash == std::string_view::npos ? lo : range.substr(dash + 1);
      if (!to_int(lo) || !to_int(hi)) {
        fail("expected numeric ranges like [1-4,7], got [" + std::string(ranges) + "]");
      }
      if (first.empty()) first = lo;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    host += first;  // keeps zero padding: node[003-005] -> node003
    i = close + 1;
  }
  if (host.empty()) fail("empty first host name");
  return host;
}

RendezvousInfo from_slurm(const Env& env) {
  RendezvousInfo info;
  info.source = "slurm";
  info.rank = parse_int("SLURM_PROCID", *env.get("SLURM_PROCID"), 0);
  auto tasks = env.first_of({"SLURM_NTASKS", "SLURM_NPROCS"});
  if (!tasks) throw std::invalid_argument("SLURM_NTASKS is not set (needed with SLURM_PROCID)");
  info.world_size = parse_int(tasks->first, tasks->second, 1);
  info.local_rank = env.require_int("SLURM_LOCALID", 0, "needed with SLURM_PROCID");
  std::string per_node_name;
  info.local_world_size = slurm_local_world_size(env, info.world_size, per_node_name);
  check_consistent(info, {"SLURM_PROCID", tasks->first, "SLURM_LOCALID", per_node_name});

  // srun starts rank 0 on the first node of the step, so that is the master.
  const auto nodelist =
      env.first_of({"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"});
  if (env.has("MASTER_ADDR")) {
    // apply_master_overrides below; the node list is not needed.
  } else if (nodelist) {
    info.master_addr = first_host(nodelist->first, nodelist->second);
  } else if (info.local_world_size < info.world_size) {
    throw std::invalid_argument(
        "neither MASTER_ADDR nor SLURM_JOB_NODELIST is set: cannot find rank 0's host");
  }
  // The step's reserved ports (srun --resv-ports, where the cluster's
  // MpiParams names a range): every task of the step sees the same list, and
  // Slurm gives no other step on its nodes the same port at the same time.
  // Without them every task computes one port from the job id, so they agree
  // without talking; distinct jobs sharing a node then rarely collide.
  if (auto ports = env.get("SLURM_STEP_RESV_PORTS")) {
    const size_t end = ports->find_first_of("-,");
    info.master_port = parse_int("SLURM_STEP_RESV_PORTS", ports->substr(0, end), 1, 65535);
  } else if (auto job = env.first_of({"SLURM_JOB_ID", "SLURM_JOBID"})) {
    info.master_port = 10000 + parse_int(job->first, job->second, 0) % 20000;
  }
  apply_master_overrides(env, info);
  return info;
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

RendezvousInfo rendezvous_from_environment(const EnvLookup& lookup) {
  const Env env(lookup);
  RendezvousInfo info;
  if (env.has("RANK")) {
    return from_torchrun(env);
  } else if (env.has("OMPI_COMM_WORLD_RANK")) {
    // Before Slurm: under `mpirun` inside an allocation, the SLURM_* variables
    // describe the batch step or mpirun's daemons, not this rank.
    info = from_openmpi(env);
  } else if (env.has("SLURM_PROCID")) {
    info = from_slurm(env);
  } else if (env.has("WORLD_SIZE")) {
    throw std::invalid_argument("WORLD_SIZE is set but RANK is not (and no Slurm or Open MPI "
                                "rank was found)");
  } else {
    apply_master_overrides(env, info);
    return info;
  }
  // Scripts often export WORLD_SIZE alongside srun/mpirun; a mismatch means
  // the script and the launcher disagree about the job.
  if (auto world = env.get("WORLD_SIZE")) {
    if (parse_int("WORLD_SIZE", *world, 1) != info.world_size) {
      reject("WORLD_SIZE", *world, fmt::format("disagrees with the {} world size {}", info.source, info.world_size));
    }
  }
  return info;
}

std::string first_slurm_host(const std::string& nodelist) {
  return first_host("", nodelist);
}

}  // namespace tula::distributed
