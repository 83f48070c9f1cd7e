// A job that reaches its target leaves its epochs at the reference batch in the job history, and the
// next job of the same setup plans with it; --no-history does neither.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/end_to_end/tune_job.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> history_lines(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

bool has_note(const json& report, const std::string& words) {
  for (const auto& n : report["notes"]) {
    if (n.get<std::string>().find(words) != std::string::npos) return true;
  }
  return false;
}

TEST(TuneHistory, AJobThatReachesItsTargetTeachesTheNextOneOfItsSetup) {
  TempDir dir;
  const std::string history = dir.file("history.jsonl");
  // One correct answer of the 51 validation samples reaches 1%: a target
  // every seed meets within the first evaluations.
  const std::string goal = " --target-accuracy 0.01 --max-epochs 3 --profile " + shared_profile();
  const auto first = run_command(job(dir.str() + "/first", "--history " + history + goal), 300);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  auto lines = history_lines(history);
  ASSERT_EQ(lines.size(), 1u) << "the job that reached its target leaves one line";
  EXPECT_GT(lines[0]["reference_epochs"].get<double>(), 0);
  EXPECT_EQ(lines[0]["job"], dir.str() + "/first");
  EXPECT_NE(lines[0]["setup"].get<std::string>().find("\"target_accuracy\":0.01"), std::string::npos);
  EXPECT_FALSE(has_note(read_json(fs::path(dir.str()) / "first" / "report.json"), "the prior: "));

  const auto second = run_command(job(dir.str() + "/second", "--seed 1 --history " + history + goal), 300);
  ASSERT_EQ(second.exit_code, 0) << second.output;
  EXPECT_TRUE(has_note(read_json(fs::path(dir.str()) / "second" / "report.json"), "from 1 earlier job of this setup"))
      << second.output;
  lines = history_lines(history);
  ASSERT_EQ(lines.size(), 2u);
  // Each line names the curve its job trained: another seed, another curve.
  for (const int seed : {0, 1}) {
    const auto curve = lines[seed]["curve"].get<std::string>();
    EXPECT_EQ(curve.rfind("seed " + std::to_string(seed) + "; ", 0), 0u) << curve;
    EXPECT_NE(curve.find(" from step 0"), std::string::npos) << curve;
  }

  const auto off = run_command(job(dir.str() + "/off", "--seed 2 --no-history" + goal), 300);
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_FALSE(has_note(read_json(fs::path(dir.str()) / "off" / "report.json"), "the prior: "));
  EXPECT_EQ(history_lines(history).size(), 2u) << "--no-history leaves no line";
}

TEST(TuneHistory, AHistoryGivenByHandThatCannotBeReadIsAnError) {
  TempDir dir;
  fs::create_directories(dir.file("a-directory"));
  const auto r = run_command(
      job(dir.str() + "/job", "--history " + dir.file("a-directory") + " --target-accuracy 0.01 --max-epochs 1 --profile " +
                                  shared_profile()),
      300);
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--history"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::testing
