// `tula tune --resume` on a job that has finished: it says so and leaves the
// job's files as they were; one whose process ended between marking the job
// done and writing its final report gets that report from its own records.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/end_to_end/tune_job.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Every file under `dir` (the profile cache beside it aside) with its bytes.
std::map<std::string, std::string> files_of(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    out[fs::relative(e.path(), dir).string()] = std::string(std::istreambuf_iterator<char>(in), {});
  }
  return out;
}

TEST(TuneResume, AFinishedJobIsLeftAsItWas) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(job(out, "--epochs 1 --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto before = files_of(out);
  const json report = read_json(fs::path(out) / "report.json");
  ASSERT_TRUE(report["measured"]["best_accuracy"].is_number()) << report["measured"].dump();

  const auto again = run_command(tula_binary() + " tune --resume " + out + " --progress lines", 120);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("has finished; nothing to resume"), std::string::npos) << again.output;
  EXPECT_NE(again.output.find("tune succeeded: 1 epochs done"), std::string::npos) << again.output;
  const auto after = files_of(out);
  EXPECT_EQ(after.size(), before.size());
  for (const auto& [name, bytes] : before) {
    const auto it = after.find(name);
    ASSERT_NE(it, after.end()) << name << " is gone";
    EXPECT_EQ(it->second, bytes) << name << " was rewritten";
  }
}

// The job's process ended after tune.json said done and before the final
// report: the report still says running, as the last periodic save left it.
TEST(TuneResume, AFinishedJobWithoutItsFinalReportGetsItFromItsRecords) {
  TempDir dir;
  const std::string out = (dir.path() / "job").string();
  const auto r = run_command(job(out, "--epochs 1 --profile " + shared_profile()), 300);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const fs::path path = fs::path(out) / "report.json";
  const json finished = read_json(path);
  json cut = finished;
  cut["state"] = "running";
  cut.erase("exit_code");
  cut.erase("reason");
  std::ofstream(path) << cut.dump(2);

  const auto again = run_command(tula_binary() + " tune --resume " + out + " --progress lines", 120);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  const json report = read_json(path);
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_EQ(report["reason"], finished["reason"]);
  for (const char* key : {"best_accuracy", "final_accuracy", "epochs", "steps", "evaluated_on"}) {
    EXPECT_EQ(report["measured"][key], finished["measured"][key]) << key;
  }
  EXPECT_NEAR(report["measured"]["time_s"].get<double>(), finished["measured"]["time_s"].get<double>(), 5.0);
  EXPECT_NEAR(report["measured"]["cost"].get<double>(), finished["measured"]["cost"].get<double>(), 1e-4);
}

}  // namespace
}  // namespace tula::testing
