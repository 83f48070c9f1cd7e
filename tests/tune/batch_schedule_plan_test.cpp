#include "tune/batch_schedule_plan.hpp"

#include <gtest/gtest.h>

namespace tula::tune {
namespace {

records::PlacedConfig at(const char* machine, int64_t nodes, int64_t batch) {
  records::PlacedConfig p;
  p.machine = machine;
  p.config.nodes = nodes;
  p.config.workers_per_node = 1;
  p.config.batch_per_worker = batch;
  return p;
}

// Planned: 1 x emu-one at 32 to 400 of 1,000 minimum steps, then 2 x emu-one at 128.
std::vector<records::ScheduleSegmentRecord> planned() {
  return {{0, 400, at("emu-one", 1, 32), 300, 50, 0.001}, {400, 1000, at("emu-one", 2, 128), 500, 40, 0.002}};
}

JobView progress(double done, double target) {
  JobView v;
  v.min_steps_done = done;
  v.target_min_steps = target;
  return v;
}

TEST(ScheduleMoveDue, AtTheSplitOfTheProgressAsAShare) {
  const auto s = planned();
  EXPECT_EQ(schedule_move_due(s, at("emu-one", 1, 32), progress(399, 1000)), nullptr);
  ASSERT_NE(schedule_move_due(s, at("emu-one", 1, 32), progress(400, 1000)), nullptr);
  EXPECT_EQ(schedule_move_due(s, at("emu-one", 1, 32), progress(400, 1000))->config.config.batch_per_worker, 128);
  // The axis was rescaled by a re-fit: 40% of the way is what counts, not 400 minimum steps.
  EXPECT_EQ(schedule_move_due(s, at("emu-one", 1, 32), progress(500, 2000)), nullptr);
  EXPECT_NE(schedule_move_due(s, at("emu-one", 1, 32), progress(800, 2000)), nullptr);
}

TEST(ScheduleMoveDue, NotOnceMovedOrMovedElsewhereOrWithoutASchedule) {
  const auto s = planned();
  EXPECT_EQ(schedule_move_due(s, at("emu-one", 2, 128), progress(900, 1000)), nullptr) << "moved already";
  EXPECT_EQ(schedule_move_due(s, at("emu-half", 4, 64), progress(900, 1000)), nullptr) << "a re-plan moved it";
  EXPECT_EQ(schedule_move_due({s[0]}, at("emu-one", 1, 32), progress(900, 1000)), nullptr) << "one segment";
  EXPECT_EQ(schedule_move_due(s, at("emu-one", 1, 32), progress(900, 0)), nullptr) << "no target yet";
}

}  // namespace
}  // namespace tula::tune
