// The emulated cluster as a Slurm cluster: the emulated_cluster_start
// fixture's two emu-one nodes each run a slurmd of their own (in the node's
// network namespace, UTS namespace and cgroups), under a slurmctld on the
// bridge. Slurm lists the nodes with their machine type; a job step's tasks
// run inside their nodes; the Slurm backend runs a two-node launch there,
// asking for the plan's layout, and plans only over the nodes sinfo lists as
// idle. Skips, saying why, where the cluster could not start (not root, no
// cgroup cpu controller, Slurm or munge missing). The script's guarantee
// after a SIGKILL of its start is checked on a cluster of its own.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/shell_wait.hpp"
#include "helpers/wait.hpp"
#include "helpers/temp_dir.hpp"
#include "plan/catalog.hpp"
#include "service/end_to_end/serve_fixture.hpp"
#include "tune/backend.hpp"
#include "tune/emulated_cluster.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using testing::read_text;
using testing::run_command;
using testing::TempDir;
using testing::tula_binary;

constexpr std::chrono::milliseconds kJobPatience{std::chrono::minutes(4)};

const std::string kState = TULA_TEST_CLUSTER_STATE;
const std::string kScript = std::string(TULA_SOURCE_DIR) + "/scripts/emulated-cluster";

// "net:[4026532xxx]", as readlink /proc/self/ns/net prints it for a process in `netns`.
std::string namespace_link(const std::string& netns) {
  struct stat st {};
  if (::stat(netns.c_str(), &st) != 0) return "(no " + netns + ")";
  return "net:[" + std::to_string(st.st_ino) + "]";
}

// The cgroup path of one v1 controller ("cpu") or of v2 in a /proc/PID/cgroup text.
std::string cgroup_of(const std::string& proc_cgroup, const std::string& controller) {
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':');
    const size_t b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) {
      if (name == controller) return line.substr(b + 1);
    }
    if (controllers.empty() && controller.empty()) return line.substr(b + 1);
  }
  return "";
}

// Runs a shell script (written to a file, so it may quote freely).
testing::CommandResult run_script(const TempDir& dir, const std::string& name, const std::string& text,
                                  int timeout_seconds) {
  const std::string path = dir.file(name);
  std::ofstream(path) << text;
  return run_command("sh " + path, timeout_seconds);
}

class EmulatedSlurm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kState)) {
      const std::string why = read_text(fs::path(kState).parent_path() / "start-failure");
      GTEST_SKIP() << "the emulated Slurm cluster is not up (ctest's emulated_cluster_start): "
                   << (why.empty() ? "no " + kState + " (not root?)" : why);
    }
    cluster_ = read_emulated_cluster(kState);
    nodes_ = cluster_.nodes_of_type("emu-one");
    ASSERT_EQ(nodes_.size(), 2u) << "the fixture makes two emu-one nodes";
    std::ifstream in(kState);
    conf_ = nlohmann::json::parse(in).value("slurm_conf", "");
    ASSERT_FALSE(conf_.empty()) << kState << " names no slurm_conf: the cluster was started without Slurm";
    old_conf_ = std::getenv("SLURM_CONF") ? std::optional<std::string>(std::getenv("SLURM_CONF")) : std::nullopt;
    ::setenv("SLURM_CONF", conf_.c_str(), 1);
  }
  void TearDown() override {
    for (const auto& job : held_jobs_) run_command(slurm("scancel " + job), 60);
    if (old_conf_) {
      ::setenv("SLURM_CONF", old_conf_->c_str(), 1);
    } else {
      ::unsetenv("SLURM_CONF");
    }
  }

  std::string slurm(const std::string& command) const { return "SLURM_CONF=" + conf_ + " " + command; }

  // Holds both nodes with a job of its own, once Slurm lists them allocated;
  // returns its id ("" after a failure, which it adds). TearDown cancels it.
  std::string hold_both_nodes(const TempDir& dir) {
    const auto held = run_script(dir, "hold.sh",
                                 slurm("sbatch --parsable --nodes=2 --job-name=holder --output=/dev/null "
                                       "--wrap='sleep 600'\n"),
                                 60);
    if (held.exit_code != 0) {
      ADD_FAILURE() << "the holding job was not submitted: " << held.output;
      return "";
    }
    std::string job = held.output;
    job.erase(job.find_last_not_of(" \n") + 1);
    held_jobs_.push_back(job);
    const std::string both = nodes_[0].name + "," + nodes_[1].name;
    const auto allocated = run_script(
        dir, "wait.sh",
        tula::testing::shell_wait_until("[ \"$(" + slurm("sinfo --noheader --Node --nodes=" + both) +
                                            " --format=%T | sort -u)\" = allocated ]",
                                        "nodes " + both + " to turn allocated") +
            "\n",
        120);
    if (allocated.exit_code != 0) {
      ADD_FAILURE() << "the nodes never turned allocated under job " << job;
      return "";
    }
    return job;
  }

  EmulatedCluster cluster_;
  std::vector<EmulatedNode> nodes_;
  std::string conf_;
  std::optional<std::string> old_conf_;
  std::vector<std::string> held_jobs_;
};

TEST_F(EmulatedSlurm, SinfoListsEachNodeWithItsMachineType) {
  const auto r = run_command(slurm("sinfo --noheader --Node --format=%N/%f/%c"), 60);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const auto& node : nodes_) {
    // One CPU each: the node's quota of one core, rounded up.
    EXPECT_NE(r.output.find(node.name + "/emu-one/1\n"), std::string::npos) << r.output;
  }
  const auto show = run_command(slurm("scontrol show node " + nodes_[1].name), 60);
  EXPECT_NE(show.output.find("NodeAddr=" + nodes_[1].address + " "), std::string::npos) << show.output;
}

TEST_F(EmulatedSlurm, AStepsTasksRunInTheirNodesNamespacesAndCgroups) {
  TempDir dir;
  // Each task writes where it runs into a file named by its rank.
  const std::string script =
      "SLURM_CONF=" + conf_ + " srun --nodes=2 --ntasks-per-node=1 --constraint=emu-one sh -c '"
      "out=" + dir.str() + "/task.$SLURM_PROCID; hostname > $out.host; readlink /proc/self/ns/net > $out.net; "
      "cat /proc/self/cgroup > $out.cgroup; ip -4 -o addr show eth0 > $out.addr'\n";
  const auto r = run_script(dir, "step.sh", script, 120);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int rank = 0; rank < 2; ++rank) {
    const auto& node = nodes_[static_cast<size_t>(rank)];
    const std::string out = dir.file("task." + std::to_string(rank));
    EXPECT_EQ(read_text(out + ".host"), node.name + "\n") << "its own UTS namespace: the node's hostname";
    EXPECT_EQ(read_text(out + ".net"), namespace_link(node.netns) + "\n") << "rank " << rank << " in " << node.netns;
    EXPECT_NE(read_text(out + ".addr").find(node.address + "/"), std::string::npos) << read_text(out + ".addr");
    const std::string cgroups = read_text(out + ".cgroup");
    for (const auto& cgroup : node.cgroups) {
      // /sys/fs/cgroup/cpu/PREFIX/n0 (v1) is "cpu:/PREFIX/n0"; /sys/fs/cgroup/PREFIX/n0 (v2) "::/PREFIX/n0".
      const std::string rest = cgroup.substr(std::string("/sys/fs/cgroup/").size());
      const bool v2 = fs::exists("/sys/fs/cgroup/cgroup.controllers");
      const std::string controller = v2 ? "" : rest.substr(0, rest.find('/'));
      const std::string path = v2 ? "/" + rest : rest.substr(rest.find('/'));
      EXPECT_EQ(cgroup_of(cgroups, controller), path) << "rank " << rank << ":\n" << cgroups;
    }
  }
}

TEST_F(EmulatedSlurm, TheBackendRunsTheLayoutOverTwoNodesThroughTheirLinks) {
  TempDir dir;
  BackendOptions options;
  options.tula_binary = tula_binary();
  const auto backend = make_backend("slurm", options);
  ASSERT_NO_THROW(backend->check_available());
  ASSERT_TRUE(backend->places_nodes());
  uint64_t before[2];
  auto link_bytes = [](const std::string& link) {
    uint64_t total = 0;
    for (const char* counter : {"rx_bytes", "tx_bytes"}) {
      total += std::stoull("0" + read_text("/sys/class/net/" + link + "/statistics/" + counter));
    }
    return total;
  };
  for (int i = 0; i < 2; ++i) before[i] = link_bytes(nodes_[static_cast<size_t>(i)].host_link);

  WorkerLaunch launch;
  launch.workers = 2;
  launch.nodes = 2;
  launch.machine_type = "emu-one";
  launch.cpus_per_worker = 1;
  launch.worker_command = {"/bin/sh", "-c",
                           "readlink /proc/self/ns/net > \"$0/netns.$SLURM_PROCID\" && exec \"$@\"", dir.str(),
                           tula_binary(), "train", "--model", "small_cnn", "--dataset", "synthetic",
                           "--synthetic-shape", "1x28x28", "--synthetic-size", "64", "--batch-size", "8",
                           "--max-steps", "3", "--no-eval", "--progress", "none", "--rendezvous-timeout", "120",
                           "--collective-timeout", "120", "--metrics", dir.file("metrics.jsonl")};
  launch.log_path = dir.file("launch.log");
  launch.work_dir = dir.str();
  const auto running = backend->start(launch);
  const auto job = running->handle().value("job_id", 0LL);
  const auto shown = run_command(slurm("scontrol show job -o " + std::to_string(job)), 60);
  const auto exit = running->wait_for(kJobPatience);
  if (!exit) running->kill();
  ASSERT_TRUE(exit) << "the job did not end within " << kJobPatience.count() / 1000 << " s; " << running->where();
  ASSERT_EQ(exit->exit_code, 0) << exit->description << "\n" << read_text(launch.log_path);

  // The plan's layout, as Slurm holds it.
  // "NumNodes=2-2" while it waits, "NumNodes=2" once it runs; one task per node.
  EXPECT_NE(shown.output.find("NumNodes=2"), std::string::npos) << shown.output;
  EXPECT_EQ(shown.output.find("NumNodes=2-3"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("NtasksPerN:B:S:C=1:"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("NumTasks=2 "), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("CPUs/Task=1 "), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("Features=emu-one "), std::string::npos) << shown.output;
  for (int rank = 0; rank < 2; ++rank) {
    const auto& node = nodes_[static_cast<size_t>(rank)];
    EXPECT_EQ(read_text(dir.file("netns." + std::to_string(rank))), namespace_link(node.netns) + "\n")
        << "rank " << rank << " should run in " << node.netns;
    EXPECT_GT(link_bytes(node.host_link) - before[rank], 64u * 1024) << node.host_link;
  }
  const std::string metrics = read_text(dir.file("metrics.jsonl"));
  EXPECT_NE(metrics.find("\"workers\":2"), std::string::npos) << metrics;
}

TEST_F(EmulatedSlurm, PlansOnlyOverTheNodesSinfoListsAsIdle) {
  BackendOptions options;
  options.tula_binary = tula_binary();
  const auto backend = make_backend("slurm", options);
  auto catalog = plan::load_catalog(std::string(TULA_SOURCE_DIR) + "/catalogs/emulated.json");
  const auto notes = backend->fit_catalog(catalog);
  ASSERT_EQ(catalog.machines.size(), 1u) << "the fixture has emu-one nodes only";
  EXPECT_EQ(catalog.machines[0].spec.name, "emu-one");
  EXPECT_EQ(catalog.machines[0].max_nodes, 2);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("machine type emu-half: none of its 0 Slurm nodes is up (sinfo): not planned"), std::string::npos)
      << all;

  // One node held by a job of its own: the plan counts the other only.
  TempDir dir;
  const auto held = run_script(dir, "hold.sh",
                               "SLURM_CONF=" + conf_ + " sbatch --parsable --nodes=1 --nodelist=" + nodes_[0].name +
                                   " --output=/dev/null --wrap='sleep 600'\n",
                               60);
  ASSERT_EQ(held.exit_code, 0) << held.output;
  std::string job = held.output;
  job.erase(job.find_last_not_of(" \n") + 1);
  // Wait on the event: the node's state turns allocated.
  const auto allocated = run_script(
      dir, "wait.sh",
      tula::testing::shell_wait_until("SLURM_CONF=" + conf_ + " sinfo --noheader --Node --nodes=" + nodes_[0].name +
                                          " --format=%T | grep -qx allocated",
                                      "node " + nodes_[0].name + " to turn allocated") +
          "\n",
      120);
  auto catalog2 = plan::load_catalog(std::string(TULA_SOURCE_DIR) + "/catalogs/emulated.json");
  std::vector<std::string> notes2;
  if (allocated.exit_code == 0) notes2 = backend->fit_catalog(catalog2);
  run_command(slurm("scancel " + job), 60);
  ASSERT_EQ(allocated.exit_code, 0) << "node " << nodes_[0].name << " never turned allocated under job " << job;
  ASSERT_EQ(catalog2.machines.size(), 1u);
  EXPECT_EQ(catalog2.machines[0].max_nodes, 1);
  all.clear();
  for (const auto& n : notes2) all += n + "\n";
  EXPECT_NE(all.find("planned on at most 1 of its 2 Slurm nodes, those sinfo lists as up and idle: " + nodes_[1].name),
            std::string::npos)
      << all;
}

// Both nodes held by another job: the plan takes them, saying its launch
// will wait; the launch waits in Slurm's queue (holding no node) until the
// other job ends, then runs, and says how long it waited.
TEST_F(EmulatedSlurm, ALaunchOnNodesAnotherJobHoldsWaitsInTheQueueAndSaysHowLong) {
  BackendOptions options;
  options.tula_binary = tula_binary();
  const auto backend = make_backend("slurm", options);
  TempDir dir;
  const std::string holder = hold_both_nodes(dir);
  ASSERT_FALSE(holder.empty());

  auto catalog = plan::load_catalog(std::string(TULA_SOURCE_DIR) + "/catalogs/emulated.json");
  std::string all;
  for (const auto& n : backend->fit_catalog(catalog)) all += n + "\n";
  ASSERT_EQ(catalog.machines.size(), 1u) << all;
  EXPECT_EQ(catalog.machines[0].max_nodes, 2) << all;
  EXPECT_NE(all.find("every one held by other jobs now (the launch waits in Slurm's queue for them)"),
            std::string::npos)
      << all;

  WorkerLaunch launch;
  launch.workers = 2;
  launch.nodes = 2;
  launch.machine_type = "emu-one";
  launch.cpus_per_worker = 1;
  launch.worker_command = {"/bin/true"};
  launch.log_path = dir.file("launch.log");
  launch.work_dir = dir.str();
  const auto submitted = std::chrono::system_clock::now();
  const auto running = backend->start(launch);
  EXPECT_FALSE(running->wait_for(std::chrono::milliseconds(200)).has_value()) << "it ran on nodes another job holds";
  EXPECT_TRUE(running->queued());
  EXPECT_FALSE(running->queued_s().has_value()) << "a wait measured before it ended";
  // Two seconds past the submission on this clock (the controller's, on the
  // same machine, counts whole seconds), the holder goes: the wait is then
  // at least one whole second whenever the controller starts the launch.
  ASSERT_TRUE(testing::eventually([&] { return std::chrono::system_clock::now() - submitted >= std::chrono::seconds(2); },
                                  "two seconds past the submission"));
  EXPECT_TRUE(running->queued()) << "it started while the nodes were held";
  run_command(slurm("scancel " + holder), 60);
  const auto exit = running->wait_for(kJobPatience);
  if (!exit) running->kill();
  ASSERT_TRUE(exit) << "the launch did not end within " << kJobPatience.count() / 1000 << " s after the nodes were freed";
  EXPECT_EQ(exit->exit_code, 0) << exit->description << "\n" << read_text(launch.log_path);
  EXPECT_FALSE(running->queued());
  ASSERT_TRUE(running->queued_s().has_value());
  // At least the hold's two seconds less sbatch's own time and the
  // scheduler's pass (1 s, the start-up's): some of it a queue's.
  EXPECT_GT(*running->queued_s(), 0.0);
  EXPECT_NE(exit->description.find("waited"), std::string::npos) << exit->description;
}

// Two `tula serve` jobs on the emulated Slurm cluster while a third job
// holds its two nodes: each plans on the nodes with the note that they are
// held, each launch waits in Slurm's queue (Slurm places them one after the
// other once the holder goes), both reach their target, and each report
// shows its wait in the queue, unbilled as the catalog says.
TEST_F(EmulatedSlurm, TwoServiceJobsQueueForTheClustersNodesAndBothFinish) {
  TempDir dir;
  const std::string holder = hold_both_nodes(dir);
  ASSERT_FALSE(holder.empty());

  const std::string source = TULA_SOURCE_DIR;
  testing::Server server(dir, {"--backend", "slurm", "--max-running", "2", "--data-root", source});
  ASSERT_GT(server.port(), 0);
  nlohmann::json job = {{"model", "small_cnn"},
                        {"dataset", "synthetic"},
                        {"synthetic_size", 512},
                        {"target_accuracy", 0.01},
                        {"max_epochs", 3},
                        {"resources", source + "/catalogs/emulated.json"},
                        {"profile", source + "/bench/results/emulated_cluster/profile_small_cnn_synthetic.json"},
                        {"start_at", "1x16"},
                        {"start_on", "emu-one:2"},
                        {"no_replan", true},
                        {"watch_every", 4}};
  const int64_t a = testing::submit(server, job);
  const int64_t b = testing::submit(server, job);
  ASSERT_GT(a, 0);
  ASSERT_GT(b, 0);
  // Both launches in the queue behind the holder, then two seconds more
  // (the controller counts whole seconds), then the holder goes.
  const auto queued = run_script(
      dir, "queued.sh",
      tula::testing::shell_wait_until("[ \"$(SLURM_CONF=" + conf_ +
                                          " squeue --noheader --states=PENDING --name=tula-tune-small_cnn --format=%i "
                                          "| wc -l)\" -eq 2 ]",
                                      "both jobs' launches pending in Slurm's queue") +
          "\n",
      240);
  ASSERT_EQ(queued.exit_code, 0) << queued.output << server.logs_of(a) << server.logs_of(b);
  const auto both_queued = std::chrono::steady_clock::now();
  ASSERT_TRUE(testing::eventually(
      [&] { return std::chrono::steady_clock::now() - both_queued >= std::chrono::seconds(2); }, "two seconds"));
  run_command(slurm("scancel " + holder), 60);

  for (const int64_t id : {a, b}) {
    ASSERT_TRUE(testing::reaches(server, id, "succeeded", std::chrono::seconds(400)));
    const auto report = nlohmann::json::parse(read_text(dir.file("work/jobs/" + std::to_string(id) + "/report.json")));
    std::string notes;
    for (const auto& n : report.at("notes")) notes += n.get<std::string>() + "\n";
    EXPECT_NE(notes.find("every one held by other jobs now"), std::string::npos) << "job " << id << ":\n" << notes;
    const auto& first = report.at("segments").at(0);
    // Held two seconds past both being queued; the scheduler's pass (1 s) is
    // the start-up's, not the queue's.
    EXPECT_GE(first.value("queued_s", 0.0), 0.5) << "job " << id << ": " << first.dump(1);
    EXPECT_FALSE(first.value("queue_billed", true)) << first.dump(1);
    const auto& phases = report.at("phases");
    EXPECT_GE(phases.value("queue_s", 0.0), first.value("queued_s", 0.0)) << phases.dump(1);
    // Unbilled: while it waited, the job paid for the runner's one node, not
    // the launch's two. Slurm counts the wait in whole seconds and the runner
    // bills by its own looks at the job, so the two may differ by a second
    // of the second node. Billed, the wait (2 s or more) would cost more.
    const double price = 0.10 / 3600;  // emu-one, per node-second
    const double total = phases.value("total_s", 0.0), queue = phases.value("queue_s", 0.0);
    EXPECT_LE(report.at("measured").value("cost", 1e9), price * (2 * (total - queue) + queue + 1.0))
        << report.at("measured").dump(1) << phases.dump(1);
  }
}

// A start killed outright (SIGKILL, no trap runs) while its daemons come up:
// `stop` still removes every daemon, namespace, cgroup and file. A cluster
// of one node under names of its own, not the fixture's.
TEST(EmulatedClusterScript, StopAfterAKilledStartLeavesNothing) {
  const std::string prefix = TULA_TEST_KILL_PREFIX;
  const std::string env = std::string("TULA_CLUSTER_PREFIX=") + prefix + " TULA_CLUSTER_SUBNET=" +
                          TULA_TEST_KILL_SUBNET + " TULA_CLUSTER_NODES=emu-one:1 ";
  const std::string dir = "/run/" + prefix;
  TempDir tmp;
  // Start, and SIGKILL it once the first slurmd is being started (its log
  // exists); the wait is on that file, for at most 60 s.
  const auto r = run_script(tmp, "kill.sh",
                            env + kScript + " start > " + tmp.file("start.log") + " 2>&1 &\n"
                            "pid=$!\n"
                            // In a subshell: giving up still goes on to the kill.
                            "(" + tula::testing::shell_wait_until("ls " + dir + "/slurm/slurmd-*.log >/dev/null 2>&1 || "
                                                                  "! kill -0 $pid 2>/dev/null",
                                                                  "the first slurmd log") + ")\n"
                            "kill -KILL $pid 2>/dev/null && echo killed\n"
                            "wait $pid; echo \"start status $?\"\n",
                            120);
  const std::string start_log = read_text(tmp.file("start.log"));
  if (r.output.find("start status 77") != std::string::npos) {
    GTEST_SKIP() << "this machine cannot host the emulated cluster: " << start_log;
  }
  const auto stop = run_command(env + kScript + " stop", 120);
  EXPECT_EQ(stop.exit_code, 0) << stop.output;
  EXPECT_NE(r.output.find("killed"), std::string::npos)
      << "the start ended before it could be killed: " << r.output << start_log;

  const auto left = run_script(tmp, "left.sh",
                               "ip netns list | grep '^" + prefix + "-'\n"
                               "ip -o link show | grep ' " + prefix + "-'\n"
                               "ls -d /sys/fs/cgroup/*/" + prefix + " /sys/fs/cgroup/" + prefix + " " + dir +
                                   "/slurm 2>/dev/null\n"
                               // [.]: the pattern does not match grep's own command line.
                               "grep -l " + dir + "/slurm/slurm[.]conf /proc/[0-9]*/cmdline 2>/dev/null\n"
                               // The killed start's scripts/slurm-cluster child, which would go on.
                               // Each with its command line, which says what was left.
                               "for e in $(grep -l TULA_SLURM_DIR=" + dir + "/slurm /proc/[0-9]*/environ 2>/dev/null); do\n"
                               "  echo \"$e: $(tr '\\0' ' ' < ${e%/environ}/cmdline 2>/dev/null)\"\n"
                               "done\n"
                               "exit 0\n",
                               60);
  EXPECT_EQ(left.output, "") << "left after stop:\n" << left.output << "\nstart: " << start_log;
}

// A cluster of the test's own (two emu-one nodes, names of its own), started
// here and stopped by the destructor whatever the test did.
class PrivateCluster {
 public:
  PrivateCluster(std::string prefix, std::string subnet)
      : env_("TULA_CLUSTER_PREFIX=" + prefix + " TULA_CLUSTER_SUBNET=" + subnet + " TULA_CLUSTER_NODES=emu-one:2 "),
        state_("/run/" + prefix + "/state.json") {
    const auto r = run_command(env_ + kScript + " start", 180);
    started_ = r.exit_code == 0;
    why_ = r.output;
    if (r.exit_code != 0 && r.exit_code != 77) ADD_FAILURE() << "the cluster did not start: " << r.output;
    cannot_ = r.exit_code == 77;
  }
  ~PrivateCluster() {
    const auto r = run_command(env_ + kScript + " stop", 180);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  PrivateCluster(const PrivateCluster&) = delete;
  PrivateCluster& operator=(const PrivateCluster&) = delete;

  bool started() const { return started_; }
  bool cannot() const { return cannot_; }
  const std::string& why() const { return why_; }
  const std::string& state() const { return state_; }
  std::string run(const std::string& args) const { return env_ + kScript + " " + args; }
  std::string slurm_conf() const {
    std::ifstream in(state_);
    return nlohmann::json::parse(in).value("slurm_conf", "");
  }

 private:
  std::string env_, state_, why_;
  bool started_ = false, cannot_ = false;
};

int64_t last_iter_step(const std::string& metrics) {
  std::ifstream in(metrics);
  int64_t step = 0;
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == "iter") step = j.value("step", int64_t{0});
  }
  return step;
}

// The steps of each launch, in the order the metrics file has them (a
// launch's rank 0 writes a "start" record before its first step).
std::vector<std::vector<int64_t>> iter_steps_by_launch(const std::string& metrics) {
  std::vector<std::vector<int64_t>> launches;
  std::ifstream in(metrics);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    if (j.value("type", "") == "start") launches.emplace_back();
    if (j.value("type", "") == "iter" && !launches.empty()) launches.back().push_back(j.value("step", int64_t{0}));
  }
  std::erase_if(launches, [](const auto& steps) { return steps.empty(); });
  return launches;
}

// A two-node tune job through Slurm loses a node outright (every process in
// it killed: its slurmd, its slurmstepd, its worker) after its first
// checkpoint: the launch fails as a whole, the job re-plans on the one node
// Slurm still lists as up and idle, resumes from its checkpoint and reaches
// its target (--no-replan keeps the watch from moving it before: the move
// after a lost node is not optional). At most one checkpoint interval of
// steps is done again.
TEST(EmulatedSlurmNodeLoss, ATuneJobReplansOnTheNodesLeftAndReachesItsTarget) {
  PrivateCluster cluster(TULA_TEST_FAIL_PREFIX, TULA_TEST_FAIL_SUBNET);
  if (cluster.cannot()) GTEST_SKIP() << "this machine cannot host the emulated Slurm cluster: " << cluster.why();
  ASSERT_TRUE(cluster.started());
  TempDir dir;
  const std::string out = dir.file("job");
  const int checkpoint_every = 4;
  // 4096 samples at a global batch of 32: 128 steps to the first evaluation, which meets the target.
  const std::string tune = "SLURM_CONF=" + cluster.slurm_conf() + " TULA_CACHE_DIR=" + dir.file("cache") + " " +
                           tula_binary() +
                           " tune --model small_cnn --dataset synthetic --synthetic-size 4096 --target-accuracy 0.01 "
                           "--max-epochs 3 --no-replan --backend slurm --resources " + TULA_SOURCE_DIR +
                           "/catalogs/emulated.json --start-at 1x16 --start-on emu-one:2 --watch-every " +
                           std::to_string(checkpoint_every) + " --max-retries 2 --progress lines --profile " +
                           TULA_SOURCE_DIR + "/bench/results/emulated_cluster/profile_small_cnn_synthetic.json --out " +
                           out;
  const auto started = run_command("(" + tune + " > " + dir.file("log") + " 2>&1; echo $? > " + dir.file("rc") +
                                   ") > /dev/null 2>&1 &");
  ASSERT_EQ(started.exit_code, 0) << started.output;
  // Past the first checkpoint, and well before the first evaluation.
  // (or the job's end, which fails the test below)
  const auto past = testing::eventually([&] { return last_iter_step(out + "/metrics.jsonl") >= 2 * checkpoint_every + 1 ||
                                                     !read_text(dir.file("rc")).empty(); },
                                        "the job's step " + std::to_string(2 * checkpoint_every + 1),
                                        std::chrono::minutes(5));
  if (!past) run_command("pkill -KILL -f -- \"tula tune .*--out " + out + "\"");
  ASSERT_TRUE(past && read_text(dir.file("rc")).empty())
      << "the job ended or stalled before the node was lost: " << past.message() << "\n" << read_text(dir.file("log"));
  const auto failed = run_command(cluster.run("fail 1"), 60);
  ASSERT_EQ(failed.exit_code, 0) << failed.output;
  const auto ended = testing::eventually([&] { return !read_text(dir.file("rc")).empty(); }, "the job to end",
                                         std::chrono::minutes(8));
  const std::string log = read_text(dir.file("log"));
  if (!ended) run_command("pkill -KILL -f -- \"tula tune .*--out " + out + "\"");
  ASSERT_TRUE(ended) << log;
  EXPECT_EQ(read_text(dir.file("rc")), "0\n") << log;
  EXPECT_NE(log.find("a worker died"), std::string::npos) << log;
  EXPECT_NE(log.find("node lost at step"), std::string::npos) << log;

  std::ifstream in(out + "/report.json");
  const auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report.value("state", ""), "succeeded") << report.dump(1);
  const auto& segments = report.at("segments");
  ASSERT_GE(segments.size(), 2u) << segments.dump(1);
  // The launch that lost its node, and the one after it on the node left.
  size_t lost = segments.size();
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    if (segments[i]["config"].value("nodes", 0) == 2 && segments[i + 1]["config"].value("nodes", 0) == 1) lost = i;
  }
  ASSERT_LT(lost, segments.size()) << "no launch on two nodes followed by one on one node: " << segments.dump(1);
  // Steps done again: from the last step of the launch that failed back to
  // the checkpoint the next one resumed from (its first step less one).
  const auto launches = iter_steps_by_launch(out + "/metrics.jsonl");
  ASSERT_GE(launches.size(), 2u);
  const int64_t last = launches[launches.size() - 2].back();
  const int64_t resumed = launches.back().front() - 1;
  EXPECT_GE(last, resumed);
  EXPECT_LE(last - resumed, checkpoint_every) << "launch ended at step " << last << ", next resumed from " << resumed;
  bool recorded = false;
  for (const auto& r : report.at("replans")) {
    if (r.value("reason", "").find("the launch failed") != std::string::npos && r.value("applied", false)) recorded = true;
  }
  EXPECT_TRUE(recorded) << report.at("replans").dump(1);
  // The launch after the lost node resumes below the failed launch's last
  // step; its start-up is still counted as the restart it was.
  EXPECT_GT(report.at("phases").value("restart_s", 0.0), 0.0) << report.at("phases").dump(1);
}

}  // namespace
}  // namespace tula::tune
