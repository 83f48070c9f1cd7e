// The options a tune job hands its workers are `tula train` flags made from
// the same schema entries as `tula tune`'s: every one of them is a flag of
// `tula train`, and a value out of bounds gets the same message from both
// commands (and from the API, whose check is the schema's too).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/option_schema.hpp"

namespace tula::cli {
namespace {

using testing::expect_tula_fails;
using testing::run_command;
using testing::tula_binary;

TEST(TrainJobFlags, EveryOptionATuneJobHandsItsWorkersIsATrainFlag) {
  const auto help = run_command(tula_binary() + " train --help");
  ASSERT_EQ(help.exit_code, 0) << help.output;
  int handed = 0;
  for (const auto& s : tune::option_specs()) {
    if (s.to_train == tune::ToTrain::No) continue;
    ++handed;
    EXPECT_NE(help.output.find(s.flag()), std::string::npos) << s.flag() << " is missing from tula train --help";
  }
  EXPECT_GE(handed, 10) << "the schema hands the workers fewer options than it did";
}

TEST(TrainJobFlags, AnOutOfBoundsValueGetsTheSameMessageFromTrainAndTune) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--momentum 1.5", "--momentum must be a number from 0 to below 1 (got 1.5)"},
      {"--target-accuracy 85", "--target-accuracy must be a number from 0 to below 1 (got 85)"},
      {"--reference-batch 0", "--reference-batch must be an integer from 1 to 1048576 (got 0)"},
      {"--weight-decay 2", "--weight-decay must be a number from 0 to 1 (got 2)"},
      {"--eval-average 1", "--eval-average must be a number from 0 to below 1 (got 1)"},
  };
  const testing::TempDir dir("tula-job-flags");
  for (const auto& [args, message] : cases) {
    expect_tula_fails("train --dataset synthetic --progress none " + args, message);
    expect_tula_fails("tune --dataset synthetic --out " + (dir.path() / "job").string() + " " + args, message);
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "job")) << "tune wrote its job before refusing a bound";
}

TEST(TrainJobFlags, TheAugmentFlagTakesBothWaysInBothCommands) {
  for (const std::string command : {"train", "tune"}) {
    const auto help = run_command(tula_binary() + " " + command + " --help");
    EXPECT_NE(help.output.find("--augment,--no-augment"), std::string::npos) << command << ":\n" << help.output;
  }
}

}  // namespace
}  // namespace tula::cli
