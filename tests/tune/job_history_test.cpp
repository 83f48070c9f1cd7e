// The job history: which jobs share a setup, the prior their E_min give, a
// torn line skipped, and lines from jobs finishing at once kept whole.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "helpers/temp_dir.hpp"
#include "tune/job_history.hpp"

namespace tula::tune {
namespace {

TuneOptions to_target(double target) {
  TuneOptions o;
  o.job.target_accuracy = target;
  return o;
}

HistoryEntry entry(const std::string& setup, double reference_epochs) {
  HistoryEntry e;
  e.setup = setup;
  e.reference_epochs = reference_epochs;
  e.epochs = reference_epochs;
  e.global_batch = 128;
  e.job = "/jobs/x";
  e.finished = "2026-11-26T00:00:00Z";
  return e;
}

predict::EnvGetter env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(HistorySetup, TheSeedObjectiveAndResourcesShareOneSetupTheTargetAndRateDoNot) {
  const auto base = history_setup(to_target(0.83), "");
  auto other = to_target(0.83);
  other.training.seed = 7;
  other.job.objective = "fastest";
  other.job.resources = "catalogs/emulated.json";
  other.pilot.pilot_steps = 40;
  EXPECT_EQ(history_setup(other, ""), base);
  EXPECT_NE(history_setup(to_target(0.84), ""), base);
  auto rate = to_target(0.83);
  rate.training.lr = 0.1;
  EXPECT_NE(history_setup(rate, ""), base);
  auto warmup = to_target(0.83);
  warmup.training.warmup_epochs = 0;
  EXPECT_NE(history_setup(warmup, ""), base);
  // Curves warmed up at the reference batch are another setup; the lines
  // written before the rule (which did) go on matching jobs that still do.
  auto everywhere = to_target(0.83);
  everywhere.training.warmup_at_reference = true;
  EXPECT_NE(history_setup(everywhere, ""), base);
  EXPECT_EQ(history_setup(everywhere, "").find("warmup_above_reference_only"), std::string::npos);
  // A TorchScript file that changed at the same path starts a setup of its own.
  EXPECT_NE(history_setup(to_target(0.83), "0123abcd"), base);
  // AGS's curves since it takes the noise gain alone at or below the reference
  // batch are not those of the lines written before (which lack the mark);
  // another optimizer's curves did not change.
  EXPECT_NE(base.find("\"ags_gain_alone_at_reference\":true"), std::string::npos) << base;
  auto sgd = to_target(0.83);
  sgd.training.optimizer = "sgd";
  EXPECT_EQ(history_setup(sgd, "").find("ags_gain_alone_at_reference"), std::string::npos);
}

TEST(HistorySetup, CurvesReadOnTheAveragedWeightsAreASetupOfTheirOwn) {
  const auto averaged = to_target(0.83);  // the default: the weights' moving average
  EXPECT_NE(history_setup(averaged, "").find("\"eval_average\":0.99"), std::string::npos);
  // The weights themselves, as every line written before the option: no mark, so those lines match.
  auto weights = to_target(0.83);
  weights.watch.eval_average = 0;
  EXPECT_NE(history_setup(weights, ""), history_setup(averaged, ""));
  EXPECT_EQ(history_setup(weights, "").find("eval_average"), std::string::npos);
}

TEST(JobHistory, WithoutAFileOrAMatchingJobThePriorIsTheStatedOne) {
  testing::TempDir dir;
  const JobHistory history(dir.file("history.jsonl"));
  const auto setup = history_setup(to_target(0.83), "");
  EXPECT_EQ(history.prior_for(setup).jobs, 0);
  EXPECT_EQ(history.prior_for(setup).epochs, stated_epochs_prior().epochs);
  EXPECT_EQ(history.prior_for(setup).unit, EpochsPrior::Unit::MinEpochs);
  history.append(entry(history_setup(to_target(0.9), ""), 5.0));
  const auto p = history.prior_for(setup);
  EXPECT_EQ(p.jobs, 0);
  EXPECT_EQ(p.log_sd, stated_epochs_prior().log_sd);
}

TEST(JobHistory, OneJobGivesItsEpochsWithTheAssumedSpreadWidenedForOneDraw) {
  testing::TempDir dir;
  const JobHistory history(dir.file("sub/history.jsonl"));  // the directory is made
  const auto setup = history_setup(to_target(0.83), "");
  history.append(entry(setup, 1.3));
  const auto p = history.prior_for(setup);
  EXPECT_EQ(p.jobs, 1);
  EXPECT_EQ(p.unit, EpochsPrior::Unit::ReferenceEpochs);
  EXPECT_NEAR(p.epochs, 1.3, 1e-12);
  EXPECT_NEAR(p.log_sd, kHistoryLogSdAssumed * std::sqrt(2.0), 1e-12);
  EXPECT_NE(p.source.find("1 earlier job of this setup"), std::string::npos) << p.source;
}

TEST(JobHistory, ThreeJobsOrMoreGiveTheirMedianAndTheirOwnSpread) {
  testing::TempDir dir;
  const JobHistory history(dir.file("history.jsonl"));
  const auto setup = history_setup(to_target(0.83), "");
  for (const double e : {1.0, 1.2, 2.0}) history.append(entry(setup, e));
  const auto p = history.prior_for(setup);
  EXPECT_EQ(p.jobs, 3);
  EXPECT_NEAR(p.epochs, 1.2, 1e-12);
  const double l1 = std::log(1.0), l2 = std::log(1.2), l3 = std::log(2.0);
  const double mean = (l1 + l2 + l3) / 3;
  const double sd = std::sqrt(((l1 - mean) * (l1 - mean) + (l2 - mean) * (l2 - mean) + (l3 - mean) * (l3 - mean)) / 2);
  EXPECT_NEAR(p.log_sd, sd * std::sqrt(1 + 1.0 / 3), 1e-12);
  // Identical jobs are still trusted no more than the floor.
  const auto same = history_setup(to_target(0.85), "");
  for (int i = 0; i < 4; ++i) history.append(entry(same, 1.5));
  EXPECT_NEAR(history.prior_for(same).log_sd, kHistoryLogSdFloor * std::sqrt(1 + 1.0 / 4), 1e-12);
}

TEST(JobHistory, OnlyTheMostRecentJobsCount) {
  testing::TempDir dir;
  const JobHistory history(dir.file("history.jsonl"));
  const auto setup = history_setup(to_target(0.83), "");
  for (size_t i = 0; i < kHistoryJobsUsed; ++i) history.append(entry(setup, 8.0));
  for (size_t i = 0; i < kHistoryJobsUsed; ++i) history.append(entry(setup, 1.5));
  const auto p = history.prior_for(setup);
  EXPECT_EQ(static_cast<size_t>(p.jobs), kHistoryJobsUsed);
  EXPECT_NEAR(p.epochs, 1.5, 1e-12);
}

TEST(HistoryCurve, NamesTheSeedAndEachLaunchsWorkersAndBatchFromItsFirstStep) {
  EXPECT_EQ(history_curve(3, {{2, 128, 0}, {1, 256, 430}}), "seed 3; 2 x 64 from step 0; 1 x 256 from step 430");
  EXPECT_NE(history_curve(3, {{2, 128, 0}}), history_curve(4, {{2, 128, 0}}));
  EXPECT_NE(history_curve(3, {{2, 128, 0}}), history_curve(3, {{1, 128, 0}}));
}

TEST(JobHistory, ACurveTrainedByTwoJobsCountsOnceAtItsLatestLine) {
  testing::TempDir dir;
  const JobHistory history(dir.file("history.jsonl"));
  const auto setup = history_setup(to_target(0.83), "");
  const auto with_curve = [&](double epochs, const std::string& curve) {
    auto e = entry(setup, epochs);
    e.curve = curve;
    return e;
  };
  // Seed 1's knee and fastest jobs chose alike: one curve, two lines.
  history.append(with_curve(2.0, "seed 1; 2 x 64 from step 0"));
  history.append(with_curve(1.0, "seed 2; 2 x 64 from step 0"));
  history.append(with_curve(2.0, "seed 1; 2 x 64 from step 0"));
  history.append(with_curve(1.2, "seed 1; 1 x 128 from step 0"));  // the same seed, another run
  // Lines written before curves were kept: each its own.
  history.append(entry(setup, 1.1));
  history.append(entry(setup, 1.1));
  ASSERT_EQ(history.entries().size(), 6u);
  EXPECT_EQ(history.entries()[0].curve, "seed 1; 2 x 64 from step 0") << "the curve survives the file";
  const auto p = history.prior_for(setup);
  EXPECT_EQ(p.jobs, 5);
  // Counted twice, seed 1 would move the median to sqrt(1.1 x 1.2).
  EXPECT_NEAR(p.epochs, 1.1, 1e-12) << "the median of 1.0, 1.1, 1.1, 1.2 and 2.0 once";
  EXPECT_NE(p.source.find("1 more line repeating a curve counted once"), std::string::npos) << p.source;
}

TEST(JobHistory, ALineThatDoesNotParseIsSkippedAndCounted) {
  testing::TempDir dir;
  const auto path = dir.file("history.jsonl");
  const JobHistory history(path);
  const auto setup = history_setup(to_target(0.83), "");
  history.append(entry(setup, 1.4));
  {
    std::ofstream out(path, std::ios::app);
    out << "{\"setup\": \"torn by a cra\n";     // a crash mid-write
    out << "{\"setup\": 3, \"reference_epochs\": 1}\n";  // not a setup
    out << to_json(entry(setup, -1)).dump() << "\n";  // no positive epochs
    auto bad_curve = to_json(entry(setup, 1.5));
    bad_curve["curve"] = 7;
    out << bad_curve.dump() << "\n";  // a curve that is not text
  }
  history.append(entry(setup, 1.6));
  const auto p = history.prior_for(setup);
  EXPECT_EQ(history.skipped_lines(), 4);
  EXPECT_EQ(p.jobs, 2);
  EXPECT_NEAR(p.epochs, std::sqrt(1.4 * 1.6), 1e-12);
}

TEST(JobHistory, JobsAppendingAtOnceKeepEveryLineWhole) {
  testing::TempDir dir;
  const auto path = dir.file("history.jsonl");
  const auto setup = history_setup(to_target(0.83), "");
  constexpr int kWriters = 4, kLines = 50;
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        auto e = entry(setup, 1.0 + w);
        e.job = std::string(2000, static_cast<char>('a' + w));  // long lines, more than one page apart
        for (int i = 0; i < kLines; ++i) JobHistory(path).append(e);
      } catch (...) {
        code = 1;
      }
      ::_exit(code);
    }
    children.push_back(pid);
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  }
  const JobHistory history(path);
  EXPECT_EQ(history.entries().size(), static_cast<size_t>(kWriters * kLines));
  EXPECT_EQ(history.skipped_lines(), 0);
}

TEST(JobHistory, AnUnwritablePlaceIsAnErrorNamingTheFile) {
  testing::TempDir dir;
  { std::ofstream(dir.file("file")) << "x"; }
  const JobHistory history(dir.file("file/history.jsonl"));  // its directory is a file
  try {
    history.append(entry("s", 1));
    FAIL() << "appended under a file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(dir.file("file/history.jsonl")), std::string::npos) << e.what();
  }
}

TEST(DefaultHistoryPath, LivesBesideTheProfileCache) {
  EXPECT_EQ(default_history_path(env_of({{"TULA_CACHE_DIR", "/c/tula"}, {"HOME", "/h"}})), "/c/tula/job-history.jsonl");
  EXPECT_EQ(default_history_path(env_of({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})), "/x/tula/job-history.jsonl");
  EXPECT_EQ(default_history_path(env_of({{"HOME", "/h"}})), "/h/.cache/tula/job-history.jsonl");
  EXPECT_THROW(default_history_path(env_of({})), std::runtime_error);
}

}  // namespace
}  // namespace tula::tune
