// `tula tune` end to end, as a user runs it: real profiles, real workers,
// real reports. The jobs train small_cnn on a small synthetic data set (the
// command is the same for Fashion-MNIST; only the size differs) so that each
// takes seconds.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json read_json(const fs::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// One quick profile of the test job on this machine, measured by the first
// test that needs it and reused by the others (written atomically, so tests
// running at once at worst both measure it).
std::string shared_profile() {
  const fs::path path = fs::path(TULA_BINARY).parent_path() / "tune-test-profile.json";
  if (fs::exists(path)) return path.string();
  const fs::path tmp = path.string() + "." + std::to_string(::getpid());
  const auto r = run_command(tula_binary() + " profile --quick --model small_cnn --dataset synthetic --train-samples 512 --out " +
                                 tmp.string(),
                             300);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  fs::rename(tmp, path);
  return path.string();
}

// The test job: small_cnn on 512 synthetic samples, a short pilot; a profile
// it measures is cached beside `out` (in the test's folder), not in the user's ~/.cache.
std::string job(const std::string& out, const std::string& extra = "") {
  return "TULA_CACHE_DIR=" + out + ".profile-cache " + tula_binary() + " tune --model small_cnn --dataset synthetic --synthetic-size 512 --pilot-steps 6 "
                         "--watch-every 4 --progress lines --out " +
         out + " " + extra;
}

TEST(TuneCommand, RunsAnEpochJobAndReportsTheBill) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(job(out, "--epochs 2 --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("plan (knee"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tune succeeded: 2 epochs done"), std::string::npos) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["format"], "tula-tune-report");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_TRUE(report["plan"].is_object());
  EXPECT_TRUE(report["chosen"].is_object());
  EXPECT_GT(report["predicted"]["time_s"].get<double>(), 0);
  EXPECT_GT(report["measured"]["time_s"].get<double>(), 0);
  EXPECT_GE(report["segments"].size(), 2u) << "the pilot, then the training at the chosen configuration";
  EXPECT_EQ(report["segments"][0]["label"], "pilot");
  // The curve read a tenth of the training samples held out; the test split once, at the end.
  EXPECT_EQ(report["measured"]["evaluated_on"], "validation");
  EXPECT_TRUE(report["measured"]["final_accuracy"].is_number()) << report["measured"].dump();
  // Two epochs of 512 samples, at least. A relaunch at a larger batch resumes
  // at the last whole step of its own batch, so up to one step of the new
  // batch (512 here, a whole epoch of this tiny set) is seen twice.
  EXPECT_GE(report["measured"]["epochs"].get<double>(), 2.0);
  EXPECT_LE(report["measured"]["epochs"].get<double>(), 3.0);
  const json state = read_json(fs::path(out) / "tune.json");
  EXPECT_EQ(state["phase"], "done");
  EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoints" / "latest.pt"));
  std::ifstream html(fs::path(out) / "report.html");
  const std::string page((std::istreambuf_iterator<char>(html)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<html"), std::string::npos);
}

// A user's own model, saved by PyTorch as TorchScript: profiled, piloted,
// planned and trained as a zoo model is.
TEST(TuneCommand, RunsAUsersTorchScriptModel) {
  TempDir dir;
  const auto made = run_command("/usr/bin/python3 " + std::string(TULA_SOURCE_DIR) +
                                    "/tests/models/make_script_models.py " + dir.str(),
                                180);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::string model = (dir.path() / "rgb.pt").string();
  const std::string out = (dir.path() / "job").string();
  // The profile cache in the test's own folder, not the user's ~/.cache.
  const auto r = run_command("TULA_CACHE_DIR=" + (dir.path() / "cache").string() + " " + tula_binary() +
                                 " tune --model " + model +
                                 " --dataset synthetic --synthetic-size 512 --pilot-steps 6 --watch-every 4 "
                                 "--progress lines --epochs 1 --out " + out,
                             300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("profiling " + model), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tune succeeded: 1 epochs done"), std::string::npos) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_EQ(report["job"]["model"], model);
}

TEST(TuneCommand, AMissingDataDirectoryIsNamed) {
  TempDir dir;
  expect_tula_fails("tune --model small_cnn --epochs 1 --data-dir /nonexistent/fmnist --out " + dir.str() + "/job",
                    "--data-dir /nonexistent/fmnist: no such directory");
}

TEST(TuneCommand, TheEmulatedClusterNeedsItsCatalogAndItsState) {
  TempDir dir;
  expect_tula_fails("tune --model small_cnn --epochs 1 --backend emulated --out " + dir.str() + "/job",
                    "--backend emulated plans over the cluster's machine types");
  // A cluster that is not up is named before anything is measured.
  expect_tula_fails("tune --model small_cnn --epochs 1 --backend emulated --resources " +
                        std::string(TULA_SOURCE_DIR) + "/catalogs/emulated.json --cluster-state " + dir.str() +
                        "/none.json --out " + dir.str() + "/job2",
                    ::geteuid() == 0 ? dir.str() + "/none.json: cannot be read; is the cluster up?" : "needs root");
}

TEST(TuneCommand, SlurmAskedForButNotReachable) {
  TempDir dir;
  // A configuration naming a controller nothing listens on.
  {
    std::ofstream conf(dir.path() / "slurm.conf");
    conf << "ClusterName=none\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=9\nNodeName=localhost CPUs=1\n"
            "PartitionName=p Nodes=localhost Default=YES\n";
  }
  expect_tula_fails("tune --model small_cnn --epochs 1 --backend slurm --out " + dir.str() + "/job", "Slurm", 120);
  // ... with the environment pointing there, the message says it cannot reach it.
  const auto r = run_command("SLURM_CONF=" + dir.str() + "/slurm.conf " + tula_binary() +
                                 " tune --model small_cnn --epochs 1 --backend slurm --out " + dir.str() + "/job2",
                             120);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("not reachable"), std::string::npos) << r.output;
}

TEST(TuneCommand, ACatalogWithNothingFeasibleSaysSo) {
  TempDir dir;
  const fs::path catalog = dir.path() / "tiny.json";
  std::ofstream(catalog) << R"({"format": "tula-catalog", "version": 1, "currency": "USD", "machine_types": [
      {"name": "tiny", "device_kind": "cpu", "devices_per_node": 1, "max_workers_per_node": 1,
       "device_memory_bytes": 1024, "price_per_hour": 0.1, "network_gbps": 10, "max_nodes": 1}]})";
  const auto r = run_command(job(dir.str() + "/job", "--epochs 1 --resources " + catalog.string() + " --profile " +
                                                         shared_profile()),
                             300);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no configuration"), std::string::npos) << r.output;
  EXPECT_EQ(read_json(dir.path() / "job" / "report.json")["state"], "failed");
}

TEST(TuneCommand, AProfileFromOtherHardwareIsReplacedAndSaidSo) {
  TempDir dir;
  json profile = read_json(shared_profile());
  profile["hardware"]["cpu_model"] = "Some Other CPU 9000";
  profile["hardware"]["cores"] = 64;
  const fs::path foreign = dir.path() / "foreign.json";
  std::ofstream(foreign) << profile.dump();
  const auto r = run_command(job(dir.str() + "/job", "--epochs 1 --profile " + foreign.string()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("is from other hardware"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Some Other CPU 9000"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("profiling small_cnn"), std::string::npos) << r.output;
}

TEST(TuneCommand, ResumeOfAnotherModelsDirectoryIsRefused) {
  TempDir dir;
  const std::string out = dir.str() + "/job";
  ASSERT_EQ(run_command(job(out, "--epochs 1 --profile " + shared_profile()), 300).exit_code, 0);
  expect_tula_fails("tune --resume " + out + " --model resnet20", "that job trains small_cnn");
  expect_tula_fails("tune --model small_cnn --epochs 1 --out " + out, "already holds a tune job");
}

TEST(TuneCommand, AnUnreachableTargetStopsWithAReportThatSaysSo) {
  TempDir dir;
  const std::string out = dir.str() + "/job";
  // Synthetic labels are random: 99% is out of reach.
  const auto r = run_command(job(out, "--target-accuracy 0.99 --max-epochs 3 --profile " + shared_profile()), 300);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  const json report = read_json(fs::path(out) / "report.json");
  EXPECT_EQ(report["state"], "stopped");
  const std::string reason = report["reason"];
  EXPECT_TRUE(reason.find("not reached") != std::string::npos || reason.find("stopped improving") != std::string::npos ||
              reason.find("beyond --max-epochs") != std::string::npos)
      << reason;
  EXPECT_NE(reason.find("checkpoint is kept"), std::string::npos) << reason;
}

TEST(TuneCommand, ADeadlineNothingMeetsStops) {
  TempDir dir;
  const auto r = run_command(job(dir.str() + "/job", "--epochs 50 --objective deadline=0.001 --profile " + shared_profile()),
                             300);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("deadline"), std::string::npos) << r.output;
}

// Starts `command` in the background; its exit status lands in `rc_file`.
// (run_command quotes with single quotes: commands here use double ones.)
void start_in_background(const std::string& command, const fs::path& log, const fs::path& rc_file) {
  const auto r = run_command("(" + command + " > " + log.string() + " 2>&1; echo $? > " + rc_file.string() +
                             ") > /dev/null 2>&1 &");
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

int64_t last_step(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::string line;
  int64_t step = 0;
  while (std::getline(in, line)) {
    const auto j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == "iter") step = j.value("step", int64_t{0});
  }
  return step;
}

bool exists_nonempty(const fs::path& p) { return fs::exists(p) && fs::file_size(p) > 0; }

int read_rc(const fs::path& rc_file) {
  std::ifstream in(rc_file);
  int rc = -1;
  in >> rc;
  return rc;
}

TEST(TuneCommand, AWorkerKilledMidTrainingResumesFromItsCheckpoint) {
  TempDir dir;
  const fs::path out = dir.path() / "job";
  start_in_background(job(out.string(), "--epochs 6 --max-retries 2 --start-at 2x8 --no-replan --profile " + shared_profile()),
                      dir.path() / "log", dir.path() / "rc");
  // Past the first periodic checkpoint (every 4 steps here).
  ASSERT_TRUE(eventually([&] { return last_step(out / "metrics.jsonl") >= 10; }, "the job's 10th step",
                         std::chrono::seconds(240)));
  // One worker of this job (its argv names the job's metrics file), killed
  // outright. The bracket keeps the pattern from matching the shell running pgrep.
  const auto pids = run_command("pgrep -f -- \"^[^ ]*tula train .*" + out.string() + "/metrics[.]jsonl\" | head -1");
  const int pid = std::atoi(pids.output.c_str());
  ASSERT_GT(pid, 0) << pids.output;
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return exists_nonempty(dir.path() / "rc"); }, "the job to end",
                         std::chrono::seconds(300)));
  std::ifstream log_in(dir.path() / "log");
  const std::string log((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read_rc(dir.path() / "rc"), 0) << log;
  EXPECT_NE(log.find("a worker died"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming from the last checkpoint, retry 1 of 2"), std::string::npos) << log;
  const json report = read_json(out / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_EQ(report["measured"]["retries"], 1);
}

TEST(TuneCommand, SigintStopsCleanlyAndResumeFinishes) {
  TempDir dir;
  const fs::path out = dir.path() / "job";
  start_in_background(job(out.string(), "--epochs 6 --start-at 2x8 --no-replan --profile " + shared_profile()), dir.path() / "log",
                      dir.path() / "rc");
  ASSERT_TRUE(eventually([&] { return last_step(out / "metrics.jsonl") >= 6; }, "the job's 6th step",
                         std::chrono::seconds(240)));
  const auto pids = run_command("pgrep -f -- \"^[^ ]*tula tune .*--out " + out.string() + " \" | head -1");
  const int pid = std::atoi(pids.output.c_str());
  ASSERT_GT(pid, 0) << pids.output;
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_TRUE(eventually([&] { return exists_nonempty(dir.path() / "rc"); }, "the job to stop",
                         std::chrono::seconds(180)));
  std::ifstream log_in(dir.path() / "log");
  const std::string log((std::istreambuf_iterator<char>(log_in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(read_rc(dir.path() / "rc"), 130) << log;
  EXPECT_EQ(read_json(out / "report.json")["state"], "stopped") << log;
  EXPECT_NE(log.find("tula tune --resume"), std::string::npos) << log;
  EXPECT_EQ(run_command("pgrep -f -- \"" + out.string() + "/metrics[.]jsonl\"").output, "") << "a worker outlived the job";

  const auto resumed = run_command(tula_binary() + " tune --progress lines --resume " + out.string(), 300);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  const json report = read_json(out / "report.json");
  EXPECT_EQ(report["state"], "succeeded") << resumed.output;
  EXPECT_GE(report["measured"]["epochs"].get<double>(), 6.0);
}

}  // namespace
}  // namespace tula::testing
