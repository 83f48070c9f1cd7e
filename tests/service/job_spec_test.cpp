// A job spec as the API takes it: every field checked, paths confined to the
// data roots (symlinks and ".." resolved), and the tune command it becomes.
#include "service/job_spec.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "helpers/temp_dir.hpp"
#include "service/spec_refusal.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(JobSpec, AValidSpecBecomesTheTuneCommand) {
  const json spec = {{"model", "small_cnn"}, {"epochs", 2}, {"objective", "knee"}, {"no_replan", true}, {"lr", 0.1}};
  EXPECT_EQ(check_job_spec(spec, {}), spec);
  const auto args = tune_arguments(spec, "/w/jobs/1", "local", {"/data"});
  const std::vector<std::string> expected = {"--out", "/w/jobs/1", "--backend", "local", "--progress", "lines",
                                             "--data-root", "/data", "--model", "small_cnn", "--epochs", "2",
                                             "--objective", "knee", "--lr", "0.1", "--no-replan"};
  EXPECT_EQ(args, expected);
}

TEST(JobSpec, UnknownFieldsAndWrongTypesAreNamed) {
  EXPECT_NE(refusal({{"modle", "x"}, {"epochs", 1}}).find("unknown field 'modle'"), std::string::npos);
  EXPECT_NE(refusal({{"epochs", "two"}}).find("field 'epochs' must be a number"), std::string::npos);
  EXPECT_NE(refusal({{"epochs", 1}, {"seed", -3}}).find("field 'seed' must be an integer"), std::string::npos);
  EXPECT_NE(refusal({{"epochs", 1}, {"no_replan", "yes"}}).find("true or false"), std::string::npos);
  EXPECT_NE(refusal(json::array({1})).find("must be a JSON object"), std::string::npos);
}

TEST(JobSpec, TunesOwnChecksSpeakOfFieldsNotFlags) {
  const std::string m = refusal({{"target_accuracy", 0.8}, {"epochs", 3}});
  EXPECT_NE(m.find("target_accuracy"), std::string::npos) << m;
  EXPECT_EQ(m.find("--"), std::string::npos) << m;
  EXPECT_NE(refusal({{"epochs", 1}, {"objective", "soonest"}}), "accepted");
}

TEST(JobSpec, PathsMustResolveInsideTheDataRoots) {
  testing::TempDir dir;
  const fs::path root = dir.path() / "data";
  fs::create_directories(root / "fmnist");
  fs::create_symlink("/etc", root / "escape");
  const SpecRules rules{{root.string()}, "local"};
  EXPECT_EQ(refusal({{"epochs", 1}, {"data_dir", (root / "fmnist").string()}}, rules), "accepted");
  EXPECT_NE(refusal({{"epochs", 1}, {"data_dir", (root / ".." / ".." / "etc").string()}}, rules).find("outside"), std::string::npos);
  EXPECT_NE(refusal({{"epochs", 1}, {"data_dir", (root / "escape").string()}}, rules).find("outside"), std::string::npos)
      << "a symlink out of the root is followed, not trusted";
  EXPECT_NE(refusal({{"epochs", 1}, {"profile", "relative/p.json"}}, rules).find("absolute"), std::string::npos);
  EXPECT_NE(refusal({{"epochs", 1}, {"resources", "/etc/passwd"}}, rules).find("outside"), std::string::npos);
  EXPECT_FALSE(path_is_under(root.string() + "-sibling/x", {root.string()})) << "a prefix of the name is not a parent";
}

}  // namespace
}  // namespace tula::service
