// The job's clock and bill (job_ledger.hpp): job time less pauses, the
// phases' seconds, start-ups and restarts, and tune.json both ways.
#include "tune/job_ledger.hpp"

#include <gtest/gtest.h>

namespace tula::tune {
namespace {

TEST(JobLedger, JobTimeLeavesOutTheStretchWhileTheJobWasStopped) {
  JobLedger ledger(1000.0, 5.0);
  EXPECT_DOUBLE_EQ(ledger.job_time(1100.0), 100.0);
  records::TuneState saved;
  ledger.save(saved, 1100.0);  // stopped at job time 100
  EXPECT_DOUBLE_EQ(saved.elapsed_s, 100.0);
  const JobLedger resumed = JobLedger::resumed(saved, 1500.0);  // 400 s later
  EXPECT_DOUBLE_EQ(resumed.job_time(1500.0), 100.0);
  EXPECT_DOUBLE_EQ(resumed.job_time(1510.0), 110.0);
  EXPECT_DOUBLE_EQ(resumed.origin_unix(), 1000.0);
}

TEST(JobLedger, TheFirstStartUpIsNoRestartButEveryLaterOneIs) {
  JobLedger ledger(0.0, 5.0);
  EXPECT_DOUBLE_EQ(ledger.restart_cost_s(), 5.0);  // the option's guess until one is measured
  EXPECT_EQ(ledger.count_launch(), 1);
  EXPECT_DOUBLE_EQ(ledger.measure_start_up(10.0, 13.0), 0.0);
  EXPECT_DOUBLE_EQ(ledger.restart_cost_s(), 3.0);
  EXPECT_EQ(ledger.restarts_measured(), 0);
  EXPECT_EQ(ledger.count_launch(), 2);
  EXPECT_DOUBLE_EQ(ledger.measure_start_up(50.0, 54.5), 4.5);
  EXPECT_DOUBLE_EQ(ledger.restart_cost_s(), 4.5);
  EXPECT_EQ(ledger.restarts_measured(), 1);
  EXPECT_DOUBLE_EQ(ledger.phases(100.0).restart_s, 4.5);
  // A first step timed before the request (clock skew across nodes) is no negative start-up.
  ledger.count_launch();
  EXPECT_DOUBLE_EQ(ledger.measure_start_up(60.0, 59.0), 0.0);
}

TEST(JobLedger, PhasesAndTheProfilingShare) {
  JobLedger ledger(0.0, 0.0);
  ledger.add_profile_s(10.0);
  ledger.add_pilot_s(15.0);
  ledger.add_train_s(70.0);
  const auto p = ledger.phases(100.0);
  EXPECT_DOUBLE_EQ(p.profile_s, 10.0);
  EXPECT_DOUBLE_EQ(p.pilot_s, 15.0);
  EXPECT_DOUBLE_EQ(p.train_s, 70.0);
  EXPECT_DOUBLE_EQ(p.total_s, 100.0);
  EXPECT_DOUBLE_EQ(p.profiling_share, 0.25);
  EXPECT_DOUBLE_EQ(ledger.phases(0.0).profiling_share, 0.0);
}

TEST(JobLedger, TheBillAccruesAtWhatIsHeldAndSurvivesAResume) {
  JobLedger ledger(0.0, 0.0);
  ledger.start_billing(0.0);
  ledger.accrue(3600.0, 2.0, 1.0);   // one node for an hour at $2
  ledger.accrue(5400.0, 2.0, 4.0);   // four nodes for half an hour
  EXPECT_DOUBLE_EQ(ledger.spent(), 6.0);
  EXPECT_EQ(ledger.count_retry(), 1);
  ledger.count_launch();
  records::TuneState saved;
  ledger.save(saved, 5400.0);
  const JobLedger resumed = JobLedger::resumed(saved, 9000.0);
  EXPECT_DOUBLE_EQ(resumed.spent(), 6.0);
  EXPECT_EQ(resumed.retries(), 1);
  EXPECT_EQ(resumed.launches(), 1);
  const auto clock = resumed.clock(5400.0);
  EXPECT_DOUBLE_EQ(clock.spent, 6.0);
  EXPECT_DOUBLE_EQ(clock.now_s, 5400.0);
}

}  // namespace
}  // namespace tula::tune
