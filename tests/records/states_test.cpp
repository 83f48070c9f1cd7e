// The states jobs move through: every string maps to one value and back, and
// the moves allowed are exactly the ones listed here.
#include "records/states.hpp"

#include <gtest/gtest.h>

#include <set>

namespace tula::records {
namespace {

TEST(States, EveryValueHasOneStringAndBack) {
  std::set<std::string_view> seen;
  for (const auto s : kAllJobStates) {
    EXPECT_EQ(job_state_from_string(to_string(s)), s);
    EXPECT_TRUE(seen.insert(to_string(s)).second) << to_string(s);
  }
  for (const auto p : kAllTunePhases) EXPECT_EQ(tune_phase_from_string(to_string(p)), p);
  for (const auto e : kAllAttemptEnds) EXPECT_EQ(attempt_end_from_string(to_string(e)), e);
  for (const auto o : {TuneOutcome::Running, TuneOutcome::Succeeded, TuneOutcome::Stopped, TuneOutcome::Failed}) {
    EXPECT_EQ(tune_outcome_from_string(to_string(o)), o);
  }
  EXPECT_FALSE(job_state_from_string("piloted"));
  EXPECT_FALSE(tune_phase_from_string("piloted")) << "no phase of that name is ever written";
  EXPECT_FALSE(job_state_from_string(""));
  EXPECT_EQ(nlohmann::json(JobState::Training), "training");
}

TEST(States, JobMovesAllowedAreExactlyThese) {
  using enum JobState;
  // from -> the states it may move to; every other pair is refused.
  const std::map<JobState, std::set<JobState>> allowed = {
      {Queued, {Profiling, Planning, Training, Failed, Cancelled}},
      {Profiling, {Planning, Training, Succeeded, Failed, Cancelled}},
      {Planning, {Training, Succeeded, Failed, Cancelled}},
      {Training, {Succeeded, Failed, Cancelled}},
      {Succeeded, {}},
      {Failed, {}},
      {Cancelled, {}},
  };
  for (const auto from : kAllJobStates) {
    for (const auto to : kAllJobStates) {
      EXPECT_EQ(can_move(from, to), allowed.at(from).contains(to)) << to_string(from) << " -> " << to_string(to);
    }
  }
}

TEST(States, FinalAndRunningStatesPartitionTheRest) {
  using enum JobState;
  for (const auto s : kAllJobStates) {
    EXPECT_FALSE(is_final(s) && is_running(s)) << to_string(s);
    EXPECT_EQ(!is_final(s) && !is_running(s), s == Queued) << to_string(s);
  }
}

TEST(States, TunePhasesMoveForwardAndShowAsTheServicesStates) {
  for (const auto from : kAllTunePhases) {
    for (const auto to : kAllTunePhases) {
      EXPECT_EQ(can_move(from, to), static_cast<int>(to) > static_cast<int>(from));
    }
  }
  EXPECT_EQ(job_state_of(TunePhase::New), JobState::Profiling);
  EXPECT_EQ(job_state_of(TunePhase::Profiled), JobState::Planning);
  EXPECT_EQ(job_state_of(TunePhase::Planned), JobState::Training);
  EXPECT_EQ(job_state_of(TunePhase::Training), JobState::Training);
  EXPECT_EQ(job_state_of(TunePhase::Done), JobState::Training) << "the end is decided when the process exits";
  for (const auto p : kAllTunePhases) EXPECT_TRUE(is_running(job_state_of(p)));
}

TEST(States, OnlyAttemptsThatDiedCountAgainstResumes) {
  const std::set<AttemptEnd> deaths = {AttemptEnd::Failed, AttemptEnd::EndedWithoutReport, AttemptEnd::CouldNotStart};
  for (const auto e : kAllAttemptEnds) EXPECT_EQ(counts_as_death(e), deaths.contains(e)) << to_string(e);
}

}  // namespace
}  // namespace tula::records
