// `tula tune` stops a job whose goal is out of reach, with a report that says so.
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

}  // namespace
}  // namespace tula::testing
