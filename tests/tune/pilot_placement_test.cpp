#include "tune/pilot_placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/test_catalog.hpp"
#include "predict/synthetic_profile.hpp"

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

// Every layout the planner weighs at global batch `batch` (one micro-batch a step).
std::vector<plan::Candidate> layouts_at(const predict::Profile& profile, const plan::Catalog& catalog, int64_t batch) {
  std::vector<plan::Candidate> all, at;
  plan::Planner(profile, catalog).evaluate_space(all);
  for (const auto& c : all) {
    if (c.config.global_batch() == batch && c.config.accumulation_steps == 1) at.push_back(c);
  }
  return at;
}

TEST(PilotAtReferenceBatch, TheObjectivesPickAmongTheLayoutsAtThatBatch) {
  const auto profile = test::make_profile({}, 77);
  const auto catalog = plan::catalog_from_json(test::catalog_json());
  const auto layouts = layouts_at(profile, catalog, 128);
  ASSERT_GT(layouts.size(), 5u) << "the test catalog has many layouts at 128";

  const auto fastest = pilot_at_reference_batch(profile, catalog, {}, plan::Objective::fastest(), 128);
  const auto cheapest = pilot_at_reference_batch(profile, catalog, {}, plan::Objective::cheapest(), 128);
  const auto knee = pilot_at_reference_batch(profile, catalog, {}, plan::Objective::knee(), 128);
  ASSERT_TRUE(fastest && cheapest && knee);
  for (const auto* c : {&*fastest, &*cheapest, &*knee}) {
    EXPECT_EQ(c->config.global_batch(), 128);
    EXPECT_EQ(c->config.accumulation_steps, 1);
  }
  for (const auto& l : layouts) {
    EXPECT_LE(fastest->time_s, l.time_s * (1 + 1e-12)) << "the fastest layout at 128";
    EXPECT_LE(cheapest->cost, l.cost * (1 + 1e-12)) << "the cheapest layout at 128";
    EXPECT_LE(knee->time_s * knee->cost, l.time_s * l.cost * (1 + 1e-9)) << "the least time x cost at 128";
  }
  EXPECT_LT(fastest->time_s, cheapest->time_s) << "the test catalog's front at 128 has more than one point";
}

// A budget or a deadline is the whole job's: the pilot runs on the layout at
// the reference batch that the limit picks for the job there (the fastest
// within the budget, the cheapest within the deadline), so the layout it
// measures could carry the job within the limit; where no layout meets the
// limit there is no answer, and the pilot takes the type where its steps
// cost least (pilot_machine_type).
TEST(PilotAtReferenceBatch, ABudgetOrADeadlinePicksWithinItsLimit) {
  const auto profile = test::make_profile({}, 77);
  const auto catalog = plan::catalog_from_json(test::catalog_json());
  const auto layouts = layouts_at(profile, catalog, 128);
  double least_cost = layouts.front().cost, most_cost = least_cost;
  double least_time = layouts.front().time_s, most_time = least_time;
  for (const auto& l : layouts) {
    least_cost = std::min(least_cost, l.cost), most_cost = std::max(most_cost, l.cost);
    least_time = std::min(least_time, l.time_s), most_time = std::max(most_time, l.time_s);
  }
  ASSERT_LT(least_cost, most_cost);
  ASSERT_LT(least_time, most_time);

  const double budget = (least_cost + most_cost) / 2;
  const auto within_budget = pilot_at_reference_batch(profile, catalog, {}, plan::Objective::budget(budget), 128);
  ASSERT_TRUE(within_budget);
  EXPECT_EQ(within_budget->config.global_batch(), 128);
  EXPECT_LE(within_budget->cost, budget);
  const double deadline = (least_time + most_time) / 2;
  const auto within_deadline =
      pilot_at_reference_batch(profile, catalog, {}, plan::Objective::deadline_hours(deadline / 3600), 128);
  ASSERT_TRUE(within_deadline);
  EXPECT_EQ(within_deadline->config.global_batch(), 128);
  EXPECT_LE(within_deadline->time_s, deadline * (1 + 1e-12));
  for (const auto& l : layouts) {
    if (l.cost <= budget) {
      EXPECT_LE(within_budget->time_s, l.time_s * (1 + 1e-12)) << "the fastest within the budget";
    }
    if (l.time_s <= deadline) {
      EXPECT_LE(within_deadline->cost, l.cost * (1 + 1e-12)) << "the cheapest within the deadline";
    }
  }
  EXPECT_FALSE(pilot_at_reference_batch(profile, catalog, {}, plan::Objective::budget(least_cost / 2), 128))
      << "no layout at 128 carries the job within half the least cost";
}

TEST(PilotAtReferenceBatch, NoLayoutAtThatBatchIsNoAnswer) {
  const auto profile = test::make_profile({}, 77);
  const auto catalog = plan::catalog_from_json(test::catalog_json());
  // Per-worker batches are powers of two: nothing splits 127 on one micro-batch a step.
  EXPECT_FALSE(pilot_at_reference_batch(profile, catalog, {}, plan::Objective::knee(), 127));
}

}  // namespace
}  // namespace tula::tune
