#include "tune/pilot_placement.hpp"

#include <gtest/gtest.h>

namespace tula::tune {
namespace {

plan::MachineType type(const char* name, double speed, double price, int64_t nodes) {
  plan::MachineType t;
  t.spec.name = name;
  t.spec.relative_speed = speed;
  t.spec.price_per_hour = price;
  t.spec.max_workers_per_node = 1;
  t.max_nodes = nodes;
  return t;
}

TEST(PilotPlacement, TheFastestTypeThatHoldsTheWorkers) {
  plan::Catalog c;
  c.machines = {type("emu-half", 0.41, 0.04, 4), type("emu-one", 0.82, 0.10, 2)};
  EXPECT_EQ(pilot_machine_type(c, 2), 1u) << "two emu-one nodes hold the pilot's two workers";
  EXPECT_EQ(pilot_machine_type(c, 3), 0u) << "three workers fit only on emu-half";
  EXPECT_FALSE(pilot_machine_type(c, 5)) << "nothing holds five";
}

TEST(PilotPlacement, TheCheaperOfEquallyFastTypes) {
  plan::Catalog c;
  c.machines = {type("dear", 1.0, 0.20, 2), type("cheap", 1.0, 0.10, 2), type("slow", 0.5, 0.01, 2)};
  EXPECT_EQ(pilot_machine_type(c, 2), 1u);
}

}  // namespace
}  // namespace tula::tune
