// Where a resumed run starts in its epoch: where it stopped at the same
// batch, at the step that has seen the same samples at another, and never
// past the epoch's end (the loader has no batch there).
#include <gtest/gtest.h>

#include <stdexcept>

#include "train/resume_position.hpp"

namespace tula::train {
namespace {

TEST(ResumePosition, TheSameBatchResumesWhereItStopped) {
  EXPECT_EQ(resumed_step_in_epoch(7, 32, 32, 10), 7);
  EXPECT_EQ(resumed_step_in_epoch(0, 32, 32, 10), 0);
  EXPECT_EQ(resumed_step_in_epoch(10, 32, 32, 10), 10);  // stopped at the epoch's end, before its evaluation
}

TEST(ResumePosition, AnotherBatchResumesAtTheStepThatHasSeenTheSameSamples) {
  EXPECT_EQ(resumed_step_in_epoch(3, 64, 32, 20), 6);   // two workers to one
  EXPECT_EQ(resumed_step_in_epoch(6, 32, 64, 10), 3);   // one worker to two
  EXPECT_EQ(resumed_step_in_epoch(5, 32, 64, 10), 2);   // a half step is done again, never skipped
}

// A pilot at 128 on a 461-sample split stops at its epoch's last step (four
// steps, the last one 77 samples counted as 128) and moves to 16: 4 x 128 / 16
// = 32 steps, past the 29 steps of an epoch at 16. It resumes at the epoch's
// end instead of asking the loader for batch 32 of 29.
TEST(ResumePosition, AStopAtAnEpochsLastStepResumesAtTheEpochsEndAtAnotherBatch) {
  EXPECT_EQ(resumed_step_in_epoch(4, 128, 16, 29), 29);
  EXPECT_EQ(resumed_step_in_epoch(4, 32, 8, 13), 13);  // 100 samples: 4 steps at 32, 13 at 8
  EXPECT_EQ(resumed_step_in_epoch(3, 128, 16, 29), 24);  // one step earlier converts exactly
}

TEST(ResumePosition, ImpossiblePositionsAreRefused) {
  EXPECT_THROW(resumed_step_in_epoch(3, 0, 16, 29), std::invalid_argument);
  EXPECT_THROW(resumed_step_in_epoch(3, 128, 0, 29), std::invalid_argument);
  EXPECT_THROW(resumed_step_in_epoch(-1, 128, 16, 29), std::invalid_argument);
  EXPECT_THROW(resumed_step_in_epoch(3, 128, 16, 0), std::invalid_argument);
}

}  // namespace
}  // namespace tula::train
