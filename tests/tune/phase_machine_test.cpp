// The tune job's phases and their moves (phase_machine.hpp).
#include "tune/phase_machine.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tula::tune {
namespace {

using records::TunePhase;

TEST(PhaseMachine, AJobWithoutAPilotGoesThroughEveryPhaseInOrder) {
  TunePhase p = TunePhase::New;
  p = next_phase(p, PhaseEvent::Profiled);
  EXPECT_EQ(p, TunePhase::Profiled);
  p = next_phase(p, PhaseEvent::Planned);
  EXPECT_EQ(p, TunePhase::Planned);
  p = next_phase(p, PhaseEvent::Training);
  EXPECT_EQ(p, TunePhase::Training);
  EXPECT_EQ(next_phase(p, PhaseEvent::Training), TunePhase::Training);  // resumed, it trains on
  EXPECT_EQ(next_phase(p, PhaseEvent::Succeeded), TunePhase::Done);
}

TEST(PhaseMachine, APilotsPlanMovesFromProfiledStraightToTraining) {
  EXPECT_EQ(next_phase(TunePhase::Profiled, PhaseEvent::PlannedAfterPilot), TunePhase::Training);
}

TEST(PhaseMachine, AFinishedJobWhoseReportWasNotWrittenSucceedsAgain) {
  EXPECT_EQ(next_phase(TunePhase::Done, PhaseEvent::Succeeded), TunePhase::Done);
}

TEST(PhaseMachine, MovesAJobNeverMakesAreRefusedByName) {
  try {
    next_phase(TunePhase::New, PhaseEvent::Training);
    FAIL() << "training before a profile was accepted";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "a tune job does not move on 'training' from phase new");
  }
  EXPECT_THROW(next_phase(TunePhase::Planned, PhaseEvent::Succeeded), std::logic_error);
  EXPECT_THROW(next_phase(TunePhase::Profiled, PhaseEvent::Profiled), std::logic_error);
  EXPECT_THROW(next_phase(TunePhase::Done, PhaseEvent::Training), std::logic_error);
  EXPECT_THROW(next_phase(TunePhase::Training, PhaseEvent::Planned), std::logic_error);
}

}  // namespace
}  // namespace tula::tune
