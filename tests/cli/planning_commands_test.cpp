// `tula predict`, `plan` and `simulate` on a synthetic profile (known
// parameters, no measuring), and the bad input each must refuse with a
// non-zero exit and a message that names the problem.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::expect_tula_fails;
using testing::run_command;
using testing::tula_binary;

class PlanningCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    profile_ = write("profile.json", predict::to_json(test::make_profile(test::Truth{}, 7)).dump());
  }

  std::string write(const std::string& name, const std::string& text) {
    const auto path = dir_.file(name);
    std::ofstream(path) << text;
    return path;
  }
  static std::string catalog(const std::string& name) { return std::string(TULA_SOURCE_DIR) + "/catalogs/" + name; }

  const testing::TempDir dir_{"tula-planning"};
  std::string profile_;
};

TEST_F(PlanningCommands, EveryNewSubcommandHasHelp) {
  for (const std::string sub : {"profile", "predict", "plan", "simulate"}) {
    const auto r = run_command(tula_binary() + " " + sub + " --help");
    EXPECT_EQ(r.exit_code, 0) << sub << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << sub;
  }
}

TEST_F(PlanningCommands, PredictOnTheProfiledMachineAndOnACatalogMachine) {
  auto r = run_command(tula_binary() + " predict --profile " + profile_ + " --workers 4 --batch-size 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = json::parse(r.output);
  EXPECT_EQ(j["global_batch"].get<int64_t>(), 128);
  EXPECT_FALSE(j["assumptions"].empty());
  r = run_command(tula_binary() + " predict --profile " + profile_ + " --catalog " + catalog("example.json") +
                  " --machine c7i.8xlarge --nodes 2 --workers 16 --batch-size 32");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("c7i.8xlarge: 2 node(s) x 8 worker(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("cost"), std::string::npos) << r.output;
}

TEST_F(PlanningCommands, PlanWritesTableJsonAndFigure) {
  const auto svg = (dir_.path() / "out" / "plan.svg").string();
  auto r = run_command(tula_binary() + " plan --profile " + profile_ + " --catalog " + catalog("example.json") +
                       " --objective knee --svg " + svg);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("knee"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(svg));
  r = run_command(tula_binary() + " plan --profile " + profile_ + " --catalog " + catalog("example.json") +
                  " --objective cheapest --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(json::parse(r.output)["objective"], "cheapest");
}

TEST_F(PlanningCommands, SimulatePrintsScalingAndAssumptions) {
  // cluster-64gpu.json states its GPUs' speed against a 2-core CPU.
  auto two_cores = test::make_profile(test::Truth{}, 7);
  two_cores.hardware.cores = 2;
  const auto profile = write("two_cores.json", predict::to_json(two_cores).dump());
  const auto r = run_command(tula_binary() + " simulate --profile " + profile + " --cluster " +
                             catalog("cluster-64gpu.json") + " --batch-size 32 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = json::parse(r.output);
  const auto& rows = j["machines"][0]["rows"];
  ASSERT_EQ(rows.size(), 4u) << "1, 2, 4 and 8 nodes";
  EXPECT_EQ(rows[3]["workers"].get<int64_t>(), 64);
  EXPECT_FALSE(j["assumptions"].empty());
  EXPECT_TRUE(j["machines"][0]["scaled_from_profile"].get<bool>()) << "a CPU profile scaled to the GPUs";
  // Any other CPU does not plan them: the catalog gives no speed against it.
  expect_tula_fails("simulate --profile " + profile_ + " --cluster " + catalog("cluster-64gpu.json"),
                    "a100x8-25g: its relative_speed 40 is against a 2-core cpu");
}

TEST_F(PlanningCommands, MalformedProfile) {
  const auto bad = write("bad.json", "{\"format\": \"tula-profile\", \"version\": 1,");
  expect_tula_fails("predict --profile " + bad + " --batch-size 8", "malformed JSON");
}

TEST_F(PlanningCommands, OldProfileVersion) {
  auto j = predict::to_json(test::make_profile(test::Truth{}, 7));
  j["version"] = 0;
  const auto old = write("old.json", j.dump());
  expect_tula_fails("predict --profile " + old + " --batch-size 8", "older than this tula reads");
}

TEST_F(PlanningCommands, TooFewSamplesToFit) {
  auto j = predict::to_json(test::make_profile(test::Truth{}, 7));
  j["samples"]["compute"] = json::array({j["samples"]["compute"][0], j["samples"]["compute"][1]});
  const auto few = write("few.json", j.dump());
  expect_tula_fails("predict --profile " + few + " --batch-size 8", "samples.compute");
}

TEST_F(PlanningCommands, CatalogWithoutPrices) {
  auto c = json::parse(std::ifstream(catalog("example.json")));
  c["machine_types"][1].erase("price_per_hour");
  const auto unpriced = write("unpriced.json", c.dump());
  expect_tula_fails("plan --profile " + profile_ + " --catalog " + unpriced, "without prices");
}

TEST_F(PlanningCommands, BatchThatFitsNoDevice) {
  // The synthetic model's static memory is 300 MB; this device has 64 MiB.
  const auto tiny = write("tiny.json", R"({"format": "tula-catalog", "version": 1, "machine_types": [
      {"name": "tiny", "device_kind": "cpu", "device_memory_gib": 0.0625, "price_per_hour": 0.1,
       "network_gbps": 10}]})");
  expect_tula_fails("predict --profile " + profile_ + " --catalog " + tiny + " --batch-size 1", "not even a batch of 1");
  expect_tula_fails("simulate --profile " + profile_ + " --cluster " + tiny, "not even a batch of 1");
  expect_tula_fails("plan --profile " + profile_ + " --catalog " + tiny, "no feasible configuration");
  // Too large for the profiled machine's memory: refused with the split that would fit...
  expect_tula_fails("predict --profile " + profile_ + " --batch-size 100000", "accumulation steps");
  // ... which --split-to-fit applies.
  const auto r = run_command(tula_binary() + " predict --profile " + profile_ + " --batch-size 100000 --split-to-fit");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("does not fit; split into"), std::string::npos) << r.output;
}

TEST_F(PlanningCommands, BadOptions) {
  expect_tula_fails("predict --profile " + profile_ + " --workers 3 --nodes 2 --batch-size 8", "spread evenly");
  expect_tula_fails("predict --profile " + profile_ + " --batch-size 8 --catalog " + catalog("example.json"), "--machine");
  expect_tula_fails("plan --profile " + profile_ + " --catalog " + catalog("example.json") + " --objective deadline=0.0001",
                 "deadline");
  expect_tula_fails("profile --model resnet9000 --input-shape 1x28x28", "resnet9000");
  expect_tula_fails("profile --model small_cnn", "--input-shape");
  expect_tula_fails("profile --model small_cnn --input-shape 1x28x28 --batch-sizes 8,16", "at least 3");
  expect_tula_fails("profile --model small_cnn --input-shape 1x28x28 --workers 1", "at least 2");
  expect_tula_fails("profile --model small_cnn --input-shape 1x28x28 --pilot-metrics x.jsonl", "--target-accuracy");
}

}  // namespace
}  // namespace tula::cli
