// `tula tune` refuses what it cannot run, before it starts, and says why.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/end_to_end/tune_job.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

TEST(TuneCommand, ResumeOfAnotherModelsDirectoryIsRefused) {
  TempDir dir;
  const std::string out = dir.str() + "/job";
  ASSERT_EQ(run_command(job(out, "--epochs 1 --profile " + shared_profile()), 300).exit_code, 0);
  expect_tula_fails("tune --resume " + out + " --model resnet20", "that job trains small_cnn");
  expect_tula_fails("tune --model small_cnn --epochs 1 --out " + out, "already holds a tune job");
}

// The bounds are the schema's (tune/option_schema.cpp): the words are the
// API's after the flag, for the values the API refuses
// (job_spec_bounds_test.cpp holds the two side by side).
TEST(TuneCommand, AnOutOfRangeValueIsRefusedWithItsRange) {
  TempDir dir;
  const std::string out = " --model small_cnn --out " + dir.str() + "/job";
  expect_tula_fails("tune --target-accuracy 1.5" + out,
                    "--target-accuracy must be a number from 0 to below 1 (got 1.5)");
  expect_tula_fails("tune --epochs 100000" + out, "--epochs must be a number from 0 to 10000 (got 100000)");
  expect_tula_fails("tune --epochs 2 --momentum 1" + out, "--momentum must be a number from 0 to below 1 (got 1)");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "job")) << "refused before anything was written";
}

TEST(TuneCommand, TheHelpListsEveryDataSet) {
  const auto r = run_command(tula_binary() + " tune --help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("fashion-mnist, mnist, cifar10, cifar100, synthetic, imagefolder"), std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace tula::testing
