#include "distributed/rendezvous.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "helpers/expect_error.hpp"

namespace tula::distributed {
namespace {

using Vars = std::map<std::string, std::string>;

EnvLookup env_of(Vars vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

RendezvousInfo read(const Vars& vars) { return rendezvous_from_environment(env_of(vars)); }

// The error must name the variable (and, when given, its value) so the user
// knows what to fix.
void expect_rejected(const Vars& vars, const std::string& variable,
                     const std::string& value = "") {
  std::vector<std::string> named = {variable};
  if (!value.empty()) named.push_back(value);
  tula::testing::expect_error<std::invalid_argument>([&] { read(vars); }, named);
}

// Every field, so that a test states the whole outcome.
void expect_info(const RendezvousInfo& actual, const RendezvousInfo& expected) {
  EXPECT_EQ(actual.source, expected.source);
  EXPECT_EQ(actual.rank, expected.rank);
  EXPECT_EQ(actual.world_size, expected.world_size);
  EXPECT_EQ(actual.local_rank, expected.local_rank);
  EXPECT_EQ(actual.local_world_size, expected.local_world_size);
  EXPECT_EQ(actual.master_addr, expected.master_addr);
  EXPECT_EQ(actual.master_port, expected.master_port);
}

Vars torchrun(int rank, int world, int local_rank, int local_world) {
  return {{"RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(world)},
          {"LOCAL_RANK", std::to_string(local_rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(local_world)},
          {"MASTER_ADDR", "10.1.2.3"},
          {"MASTER_PORT", "29400"}};
}

Vars slurm() {
  return {{"SLURM_PROCID", "5"},       {"SLURM_NTASKS", "8"},
          {"SLURM_LOCALID", "1"},      {"SLURM_NODEID", "1"},
          {"SLURM_NTASKS_PER_NODE", "4"}, {"SLURM_JOB_NODELIST", "node[003-005,9]"},
          {"SLURM_JOB_ID", "123456"}};
}

Vars openmpi() {
  return {{"OMPI_COMM_WORLD_RANK", "3"},
          {"OMPI_COMM_WORLD_SIZE", "4"},
          {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}};
}

Vars with(Vars base, const Vars& extra) {
  for (const auto& [k, v] : extra) base[k] = v;
  return base;
}

Vars without(Vars base, const std::string& name) {
  base.erase(name);
  return base;
}

TEST(Rendezvous, EmptyEnvironmentIsASingleProcess) {
  expect_info(read({}), {.rank = 0, .world_size = 1, .local_rank = 0, .local_world_size = 1,
                         .master_addr = "127.0.0.1", .master_port = 29500, .source = "default"});
}

TEST(Rendezvous, SingleProcessHonoursMasterVariables) {
  const RendezvousInfo info = read({{"MASTER_ADDR", "host1"}, {"MASTER_PORT", "1234"}});
  EXPECT_EQ(info.source, "default");
  EXPECT_EQ(info.master_addr, "host1");
  EXPECT_EQ(info.master_port, 1234);
}

TEST(Rendezvous, Torchrun) {
  expect_info(read(torchrun(6, 8, 2, 4)), {.rank = 6, .world_size = 8, .local_rank = 2, .local_world_size = 4,
                                           .master_addr = "10.1.2.3", .master_port = 29400, .source = "torchrun"});
}

TEST(Rendezvous, TorchrunLocalValuesDefaultToOneNode) {
  const RendezvousInfo info = read({{"RANK", "2"}, {"WORLD_SIZE", "3"}});
  EXPECT_EQ(info.local_rank, 2);
  EXPECT_EQ(info.local_world_size, 3);
  EXPECT_EQ(info.master_addr, "127.0.0.1");
  EXPECT_EQ(info.master_port, 29500);
}

TEST(Rendezvous, TorchrunRejectsMissingOrInconsistentValues) {
  expect_rejected({{"RANK", "0"}}, "WORLD_SIZE");
  expect_rejected({{"WORLD_SIZE", "2"}}, "RANK");
  expect_rejected(torchrun(4, 4, 0, 4), "RANK", "4");
  expect_rejected(torchrun(1, 4, 2, 2), "LOCAL_RANK", "2");
  expect_rejected(torchrun(1, 4, 0, 8), "LOCAL_WORLD_SIZE", "8");
  expect_rejected(with(torchrun(0, 2, 0, 2), {{"WORLD_SIZE", "0"}}), "WORLD_SIZE", "0");
  // Several nodes cannot meet on the loopback address.
  expect_rejected(without(torchrun(0, 8, 0, 4), "MASTER_ADDR"), "MASTER_ADDR");
}

TEST(Rendezvous, RejectsMalformedNumbersNamingTheVariable) {
  for (const std::string bad : {"abc", "-1", "1.5", " 1", "1 ", "+1", "0x1", "",
                                "99999999999999999999"}) {
    SCOPED_TRACE("value \"" + bad + "\"");
    expect_rejected(with(torchrun(0, 2, 0, 2), {{"RANK", bad}}), "RANK", bad);
    expect_rejected(with(torchrun(0, 2, 0, 2), {{"LOCAL_RANK", bad}}), "LOCAL_RANK", bad);
    expect_rejected(with(slurm(), {{"SLURM_NTASKS", bad}}), "SLURM_NTASKS", bad);
    expect_rejected(with(openmpi(), {{"OMPI_COMM_WORLD_SIZE", bad}}), "OMPI_COMM_WORLD_SIZE",
                    bad);
  }
}

TEST(Rendezvous, RejectsBadMasterPortAndAddress) {
  for (const std::string bad : {"0", "65536", "http", "-80", ""}) {
    SCOPED_TRACE("MASTER_PORT=\"" + bad + "\"");
    expect_rejected(with(torchrun(0, 2, 0, 2), {{"MASTER_PORT", bad}}), "MASTER_PORT", bad);
    expect_rejected(with(slurm(), {{"MASTER_PORT", bad}}), "MASTER_PORT", bad);
    expect_rejected({{"MASTER_PORT", bad}}, "MASTER_PORT", bad);
  }
  EXPECT_EQ(read(with(torchrun(0, 2, 0, 2), {{"MASTER_PORT", "65535"}})).master_port, 65535);
  expect_rejected(with(torchrun(0, 2, 0, 2), {{"MASTER_ADDR", ""}}), "MASTER_ADDR");
  expect_rejected(with(torchrun(0, 2, 0, 2), {{"MASTER_ADDR", "a b"}}), "MASTER_ADDR", "a b");
}

TEST(Rendezvous, Slurm) {
  expect_info(read(slurm()), {.rank = 5, .world_size = 8, .local_rank = 1, .local_world_size = 4,
                              .master_addr = "node003", .master_port = 10000 + 123456 % 20000, .source = "slurm"});
}

TEST(Rendezvous, SlurmPortIsTheSameForEveryTaskOfAJob) {
  const Vars other_task = with(slurm(), {{"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"},
                                         {"SLURM_NODEID", "0"}});
  EXPECT_EQ(read(slurm()).master_port, read(other_task).master_port);
  EXPECT_NE(read(slurm()).master_port,
            read(with(slurm(), {{"SLURM_JOB_ID", "123457"}})).master_port);
  const int port = read(with(slurm(), {{"SLURM_JOB_ID", "4294967"}})).master_port;
  EXPECT_GE(port, 10000);
  EXPECT_LT(port, 30000);
  // No job id (an odd environment): the usual default, still the same for all.
  EXPECT_EQ(read(without(slurm(), "SLURM_JOB_ID")).master_port, 29500);
}

TEST(Rendezvous, SlurmStepReservedPortIsTheMasterPort) {
  // srun --resv-ports: a range or a list, the same for every task of the step.
  EXPECT_EQ(read(with(slurm(), {{"SLURM_STEP_RESV_PORTS", "12003-12004"}})).master_port, 12003);
  EXPECT_EQ(read(with(slurm(), {{"SLURM_STEP_RESV_PORTS", "12007,12011"}})).master_port, 12007);
  EXPECT_EQ(read(with(slurm(), {{"SLURM_STEP_RESV_PORTS", "12005"}})).master_port, 12005);
  // Two jobs' steps on one node get different reserved ports, whatever their ids.
  EXPECT_NE(read(with(slurm(), {{"SLURM_STEP_RESV_PORTS", "12000"}})).master_port,
            read(with(slurm(), {{"SLURM_JOB_ID", "143456"}, {"SLURM_STEP_RESV_PORTS", "12001"}})).master_port);
  expect_rejected(with(slurm(), {{"SLURM_STEP_RESV_PORTS", "ports"}}), "SLURM_STEP_RESV_PORTS");
}

TEST(Rendezvous, SlurmMasterVariablesOverride) {
  const RendezvousInfo info =
      read(with(slurm(), {{"MASTER_ADDR", "login1"}, {"MASTER_PORT", "4242"}}));
  EXPECT_EQ(info.source, "slurm");
  EXPECT_EQ(info.master_addr, "login1");
  EXPECT_EQ(info.master_port, 4242);
  // With MASTER_ADDR set, the node list is not consulted at all.
  EXPECT_EQ(read(with(slurm(), {{"MASTER_ADDR", "login1"}, {"SLURM_JOB_NODELIST", "bad["}}))
                .master_addr,
            "login1");
}

TEST(Rendezvous, SlurmNodeListSources) {
  Vars vars = without(slurm(), "SLURM_JOB_NODELIST");
  vars["SLURM_NODELIST"] = "a1,b2";
  EXPECT_EQ(read(vars).master_addr, "a1");
  // The step's list is where srun put rank 0.
  vars["SLURM_STEP_NODELIST"] = "gpu-[7-8]-x";
  EXPECT_EQ(read(vars).master_addr, "gpu-7-x");
  expect_rejected(with(slurm(), {{"SLURM_JOB_NODELIST", "node[1-2"}}), "SLURM_JOB_NODELIST",
                  "node[1-2");
  // A multi-node job with no way to find rank 0.
  expect_rejected(without(slurm(), "SLURM_JOB_NODELIST"), "MASTER_ADDR");
}

TEST(Rendezvous, SlurmSingleNodeWithoutNodeListUsesLoopback) {
  const RendezvousInfo info = read({{"SLURM_PROCID", "1"},
                                    {"SLURM_NTASKS", "2"},
                                    {"SLURM_LOCALID", "1"},
                                    {"SLURM_NTASKS_PER_NODE", "2"}});
  EXPECT_EQ(info.local_world_size, 2);
  EXPECT_EQ(info.master_addr, "127.0.0.1");
}

TEST(Rendezvous, SlurmTasksPerNodeForms) {
  // Uniform: the node's index does not matter.
  EXPECT_EQ(read(with(slurm(), {{"SLURM_NTASKS_PER_NODE", "4(x2)"}})).local_world_size, 4);
  EXPECT_EQ(read(without(with(slurm(), {{"SLURM_NTASKS_PER_NODE", "4(x2)"}}), "SLURM_NODEID"))
                .local_world_size,
            4);
  // Uneven: SLURM_NODEID picks the entry.
  const Vars uneven = {{"SLURM_PROCID", "2"},   {"SLURM_NTASKS", "3"},
                       {"SLURM_LOCALID", "0"},  {"SLURM_NODEID", "1"},
                       {"SLURM_NTASKS_PER_NODE", "2,1"}, {"SLURM_JOB_NODELIST", "n[1-2]"}};
  EXPECT_EQ(read(uneven).local_world_size, 1);
  const Vars repeated = with(uneven, {{"SLURM_PROCID", "6"},
                                      {"SLURM_NTASKS", "7"},
                                      {"SLURM_NODEID", "2"},
                                      {"SLURM_NTASKS_PER_NODE", "3(x2),1"}});
  EXPECT_EQ(read(repeated).local_world_size, 1);
  EXPECT_EQ(read(with(repeated, {{"SLURM_PROCID", "4"}, {"SLURM_NODEID", "1"}})).local_world_size,
            3);
  expect_rejected(without(uneven, "SLURM_NODEID"), "SLURM_NODEID");
  expect_rejected(with(uneven, {{"SLURM_NODEID", "2"}}), "SLURM_NODEID", "2");
  // The step's list (what srun started) wins over the user's request.
  EXPECT_EQ(read(with(slurm(), {{"SLURM_STEP_TASKS_PER_NODE", "2(x4)"}})).local_world_size, 2);
  // Without any per-node list: SLURM_TASKS_PER_NODE, then the whole job on one node.
  EXPECT_EQ(read(with(without(slurm(), "SLURM_NTASKS_PER_NODE"),
                      {{"SLURM_TASKS_PER_NODE", "4(x2)"}}))
                .local_world_size,
            4);
  EXPECT_EQ(read(without(slurm(), "SLURM_NTASKS_PER_NODE")).local_world_size, 8);
  expect_rejected(with(without(slurm(), "SLURM_NTASKS_PER_NODE"), {{"SLURM_NNODES", "2"}}),
                  "SLURM_NTASKS_PER_NODE");
}

TEST(Rendezvous, SlurmRejectsMalformedTasksPerNode) {
  for (const std::string bad : {"", "4(x)", "4(2)", "4(x2", "x2", "4,", ",4", "4(x0)", "a",
                                "4(x2)3", "0"}) {
    SCOPED_TRACE("SLURM_NTASKS_PER_NODE=\"" + bad + "\"");
    expect_rejected(with(slurm(), {{"SLURM_NTASKS_PER_NODE", bad}}), "SLURM_NTASKS_PER_NODE",
                    bad);
  }
}

TEST(Rendezvous, SlurmRejectsInconsistentValues) {
  expect_rejected(with(slurm(), {{"SLURM_PROCID", "8"}}), "SLURM_PROCID", "8");
  expect_rejected(with(slurm(), {{"SLURM_LOCALID", "4"}}), "SLURM_LOCALID", "4");
  expect_rejected(with(slurm(), {{"SLURM_NTASKS_PER_NODE", "16"}}), "SLURM_NTASKS_PER_NODE");
  expect_rejected(without(slurm(), "SLURM_NTASKS"), "SLURM_NTASKS");
  expect_rejected(without(slurm(), "SLURM_LOCALID"), "SLURM_LOCALID");
  expect_rejected(with(slurm(), {{"SLURM_JOB_ID", "job7"}}), "SLURM_JOB_ID", "job7");
  EXPECT_EQ(read(with(without(slurm(), "SLURM_NTASKS"), {{"SLURM_NPROCS", "8"}})).world_size, 8);
}

TEST(Rendezvous, OpenMpi) {
  expect_info(read(openmpi()), {.rank = 3, .world_size = 4, .local_rank = 3, .local_world_size = 4,
                                .master_addr = "127.0.0.1", .master_port = 29500, .source = "openmpi"});
}

TEST(Rendezvous, OpenMpiAcrossNodesNeedsMasterAddr) {
  const Vars two_nodes = with(openmpi(), {{"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"}});
  expect_rejected(two_nodes, "MASTER_ADDR");
  const RendezvousInfo info =
      read(with(two_nodes, {{"MASTER_ADDR", "head"}, {"MASTER_PORT", "5000"}}));
  EXPECT_EQ(info.master_addr, "head");
  EXPECT_EQ(info.master_port, 5000);
  EXPECT_EQ(info.local_world_size, 2);
}

TEST(Rendezvous, OpenMpiRejectsInconsistentValues) {
  expect_rejected(with(openmpi(), {{"OMPI_COMM_WORLD_RANK", "4"}}), "OMPI_COMM_WORLD_RANK", "4");
  expect_rejected(without(openmpi(), "OMPI_COMM_WORLD_SIZE"), "OMPI_COMM_WORLD_SIZE");
  expect_rejected(with(openmpi(), {{"OMPI_COMM_WORLD_LOCAL_RANK", "5"}}),
                  "OMPI_COMM_WORLD_LOCAL_RANK", "5");
}

TEST(Rendezvous, Precedence) {
  // torchrun's variables are explicit and win over everything.
  EXPECT_EQ(read(with(with(slurm(), openmpi()), torchrun(1, 2, 1, 2))).source, "torchrun");
  // mpirun inside a Slurm allocation: the SLURM_* variables describe the
  // batch step, not this rank.
  const RendezvousInfo info = read(with(slurm(), openmpi()));
  EXPECT_EQ(info.source, "openmpi");
  EXPECT_EQ(info.rank, 3);
  EXPECT_EQ(read(slurm()).source, "slurm");
}

TEST(Rendezvous, WorldSizeMustAgreeWithTheLauncher) {
  EXPECT_EQ(read(with(slurm(), {{"WORLD_SIZE", "8"}})).world_size, 8);
  expect_rejected(with(slurm(), {{"WORLD_SIZE", "4"}}), "WORLD_SIZE", "4");
  expect_rejected(with(openmpi(), {{"WORLD_SIZE", "8"}}), "WORLD_SIZE", "8");
}

TEST(Rendezvous, ProcessEnvironmentReadsTheRealEnvironment) {
  const std::string name = "TULA_RENDEZVOUS_TEST_VARIABLE";
  ::unsetenv(name.c_str());
  const EnvLookup env = process_environment();
  EXPECT_FALSE(env(name).has_value());
  ::setenv(name.c_str(), "value 1", 1);
  EXPECT_EQ(env(name), std::optional<std::string>("value 1"));
  ::unsetenv(name.c_str());
}

TEST(FirstSlurmHost, Forms) {
  EXPECT_EQ(first_slurm_host("node[003-005,9],gpu1"), "node003");
  EXPECT_EQ(first_slurm_host("node[003-005,9]"), "node003");
  EXPECT_EQ(first_slurm_host("node[9,3-5]"), "node9");
  EXPECT_EQ(first_slurm_host("a1,b2"), "a1");
  EXPECT_EQ(first_slurm_host("gpu-[1-4]-x"), "gpu-1-x");
  EXPECT_EQ(first_slurm_host("gpu-[1-4]-x,cpu[1-2]"), "gpu-1-x");
  EXPECT_EQ(first_slurm_host("rack[2-3]-node[01-04]"), "rack2-node01");
  EXPECT_EQ(first_slurm_host("single"), "single");
  EXPECT_EQ(first_slurm_host("node-1.cluster.org"), "node-1.cluster.org");
  EXPECT_EQ(first_slurm_host("n[7]"), "n7");
}

TEST(FirstSlurmHost, RejectsMalformedLists) {
  for (const std::string bad :
       {"", ",a", "node[1-3", "node]1", "node[]", "node[a-b]", "node[1-]", "node[1,,2]",
        "node[[1]]", "a b", "[1-2"}) {
    SCOPED_TRACE("\"" + bad + "\"");
    try {
      const std::string host = first_slurm_host(bad);
      // "[1-2" is unbalanced; only well-formed lists may yield a host.
      ADD_FAILURE() << "accepted, returned \"" << host << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("\"" + bad + "\""), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace tula::distributed
