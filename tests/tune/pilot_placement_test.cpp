#include "tune/pilot_placement.hpp"

#include <gtest/gtest.h>

namespace tula::tune {
namespace {

using Kind = plan::Objective::Kind;

plan::MachineType type(const char* name, double speed, double price, int64_t nodes, int64_t workers_per_node = 1) {
  plan::MachineType t;
  t.spec.name = name;
  t.spec.relative_speed = speed;
  t.spec.price_per_hour = price;
  t.spec.max_workers_per_node = workers_per_node;
  t.max_nodes = nodes;
  return t;
}

// The emulated cluster's catalog (catalogs/emulated.json): emu-half costs
// 0.04 / 0.41 = 0.098 per unit of work, emu-one 0.10 / 0.82 = 0.122.
plan::Catalog emulated() {
  plan::Catalog c;
  c.machines = {type("emu-half", 0.41, 0.04, 4), type("emu-one", 0.82, 0.10, 2)};
  return c;
}

TEST(PilotPlacement, TheFastestTypeThatHoldsTheWorkersWhereTimeCounts) {
  const auto c = emulated();
  for (const auto kind : {Kind::Fastest, Kind::Knee, Kind::Deadline}) {
    EXPECT_EQ(pilot_machine_type(c, 2, kind), 1u) << "two emu-one nodes hold the pilot's two workers";
    EXPECT_EQ(pilot_machine_type(c, 3, kind), 0u) << "three workers fit only on emu-half";
    EXPECT_FALSE(pilot_machine_type(c, 5, kind)) << "nothing holds five";
  }
}

TEST(PilotPlacement, TheTypeWhereItsStepsCostLeastWhereMoneyCounts) {
  const auto c = emulated();
  for (const auto kind : {Kind::Cheapest, Kind::Budget}) {
    EXPECT_EQ(pilot_machine_type(c, 1, kind), 0u) << "emu-half does the pilot's work for 80% of emu-one's money";
    EXPECT_EQ(pilot_machine_type(c, 2, kind), 0u) << "and two workers' on two of its nodes";
    EXPECT_FALSE(pilot_machine_type(c, 5, kind)) << "nothing holds five";
  }
}

TEST(PilotPlacement, MoneyCountsTheNodesThePilotTakes) {
  plan::Catalog c;
  // A node of the one-slot type is cheaper (0.10 against 0.15 an hour), but
  // the pilot's two workers take two of its nodes and one of the other's.
  c.machines = {type("single", 1.0, 0.10, 4, 1), type("double", 1.0, 0.15, 2, 2)};
  EXPECT_EQ(pilot_machine_type(c, 2, Kind::Cheapest), 1u);
  EXPECT_EQ(pilot_machine_type(c, 1, Kind::Cheapest), 0u) << "one worker takes one node of either";
}

TEST(PilotPlacement, TiesGoToTheOtherSide) {
  plan::Catalog fast;
  fast.machines = {type("dear", 1.0, 0.20, 2), type("cheap", 1.0, 0.10, 2), type("slow", 0.5, 0.01, 2)};
  EXPECT_EQ(pilot_machine_type(fast, 2, Kind::Fastest), 1u) << "the cheaper of equally fast types";
  plan::Catalog cheap;
  cheap.machines = {type("slow", 0.5, 0.05, 2), type("fast", 1.0, 0.10, 2)};
  EXPECT_EQ(pilot_machine_type(cheap, 2, Kind::Cheapest), 1u) << "the faster of types that cost the same per work";
}

TEST(PilotAtLayout, ThePlansNodesShareTheReferenceBatch) {
  predict::Config planned;
  planned.nodes = 2;
  planned.workers_per_node = 1;
  planned.batch_per_worker = 512;
  planned.accumulation_steps = 2;
  const auto pilot = pilot_at_layout(planned, 128);
  EXPECT_EQ(pilot.nodes, 2);
  EXPECT_EQ(pilot.workers_per_node, 1);
  EXPECT_EQ(pilot.batch_per_worker, 64) << "the reference batch over two workers, not the plan's batch";
  EXPECT_EQ(pilot.accumulation_steps, 1);
  EXPECT_EQ(pilot.global_batch(), 128);

  planned.nodes = 3;
  planned.workers_per_node = 2;
  EXPECT_EQ(pilot_at_layout(planned, 128).batch_per_worker, 21) << "six workers share 128 as far as it divides";
  planned.nodes = 4;
  planned.workers_per_node = 4;
  EXPECT_EQ(pilot_at_layout(planned, 8).batch_per_worker, 1) << "at least one sample a worker";
}

}  // namespace
}  // namespace tula::tune
