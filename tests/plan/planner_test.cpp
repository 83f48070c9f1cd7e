#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <map>

#include "plan/report.hpp"
#include "plan/svg.hpp"
#include "plan/test_catalog.hpp"
#include "predict/error.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::plan {
namespace {

const predict::Profile& profile() {
  static const auto p = test::make_profile({}, 77);
  return p;
}

Catalog catalog() { return catalog_from_json(test::catalog_json()); }

TEST(Planner, KneePlanIsOnANonDominatedFront) {
  Planner planner(profile(), catalog());
  const auto plan = planner.plan(Objective::knee());
  ASSERT_GT(plan.candidates.size(), 500u);  // the default space of the test catalog
  ASSERT_GE(plan.front.size(), 3u);
  EXPECT_EQ(plan.chosen, plan.knee);
  EXPECT_NE(std::find(plan.front.begin(), plan.front.end(), plan.knee), plan.front.end());
  // No candidate beats a front point in both time and cost.
  for (size_t f : plan.front) {
    const TimeCost a{plan.candidates[f].time_s, plan.candidates[f].cost};
    for (const auto& c : plan.candidates) EXPECT_FALSE(dominates({c.time_s, c.cost}, a));
  }
  EXPECT_TRUE(plan.goal.to_target);
  EXPECT_FALSE(plan.sensitivity.statement.empty());
  EXPECT_EQ(plan.sensitivity.variants.size(), 1u) << "the runner-up by time x cost";
  EXPECT_NE(plan.notes.explanation.find("Chosen (knee)"), std::string::npos);
  EXPECT_NE(plan.notes.explanation.find("What limits it most"), std::string::npos);
  EXPECT_EQ(plan.front_time.size(), plan.front.size());
  EXPECT_EQ(plan.chosen_prediction.global_batch, plan.chosen_candidate().config.global_batch());
  EXPECT_NEAR(plan.chosen_prediction.time_s.estimate, plan.chosen_candidate().time_s, 1e-9);
}

TEST(Planner, ObjectivesPickTheBruteForceOptimum) {
  Planner planner(profile(), catalog());
  const auto fastest = planner.plan(Objective::fastest());
  const auto cheapest = planner.plan(Objective::cheapest());
  double best_t = 1e300, best_c = 1e300;
  for (const auto& c : fastest.candidates) best_t = std::min(best_t, c.time_s), best_c = std::min(best_c, c.cost);
  EXPECT_EQ(fastest.chosen_candidate().time_s, best_t);
  EXPECT_EQ(cheapest.chosen_candidate().cost, best_c);

  // Deadline halfway (in log) between the fastest and cheapest times.
  const double deadline = std::sqrt(best_t * cheapest.chosen_candidate().time_s);
  const auto d = planner.plan({Objective::Kind::Deadline, deadline});
  double cheapest_in_time = 1e300;
  for (const auto& c : d.candidates) {
    if (c.time_s <= deadline) cheapest_in_time = std::min(cheapest_in_time, c.cost);
  }
  EXPECT_LE(d.chosen_candidate().time_s, deadline);
  EXPECT_EQ(d.chosen_candidate().cost, cheapest_in_time);

  const double budget = 0.5 * (best_c + fastest.chosen_candidate().cost);
  const auto b = planner.plan(Objective::budget(budget));
  double fastest_in_budget = 1e300;
  for (const auto& c : b.candidates) {
    if (c.cost <= budget) fastest_in_budget = std::min(fastest_in_budget, c.time_s);
  }
  EXPECT_LE(b.chosen_candidate().cost, budget);
  EXPECT_EQ(b.chosen_candidate().time_s, fastest_in_budget);
}

TEST(Planner, InfeasibleObjectivesAreClearErrors) {
  Planner planner(profile(), catalog());
  try {
    planner.plan(Objective::deadline_hours(1.0 / 3600));  // one second
    FAIL();
  } catch (const predict::InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("deadline"), std::string::npos);
  }
  try {
    planner.plan(Objective::budget(1e-6));
    FAIL();
  } catch (const predict::InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("budget"), std::string::npos);
  }
}

TEST(Planner, SkipsMachinesItCannotPredictOrFit) {
  auto j = test::catalog_json();
  j["machine_types"].push_back({{"name", "tpu.x"},
                                {"device_kind", "tpu"},
                                {"device_memory_gib", 16},
                                {"price_per_hour", 3.0},
                                {"network_gbps", 100}});
  j["machine_types"].push_back({{"name", "cpu.tiny"},
                                {"device_kind", "cpu"},
                                {"device_memory_bytes", 100000000},  // under the static memory
                                {"price_per_hour", 0.01},
                                {"network_gbps", 1}});
  Planner planner(profile(), catalog_from_json(j));
  const auto plan = planner.plan(Objective::cheapest());
  std::string skipped;
  for (const auto& s : plan.notes.skipped) skipped += s + "\n";
  EXPECT_NE(skipped.find("tpu.x: no profile of a 'tpu' device"), std::string::npos) << skipped;
  EXPECT_NE(skipped.find("cpu.tiny: not even a batch of 1 fits"), std::string::npos) << skipped;
  for (const auto& c : plan.candidates) EXPECT_LT(c.machine, 3u);
}

TEST(Planner, NothingFeasibleIsAClearError) {
  auto j = test::catalog_json();
  for (auto& m : j["machine_types"]) {
    if (m.contains("accelerator")) {
      m["accelerator"]["memory_bytes"] = 1000;
      continue;
    }
    m.erase("device_memory_gib");
    m["device_memory_bytes"] = 1000;
  }
  Planner planner(profile(), catalog_from_json(j));
  try {
    planner.plan(Objective::knee());
    FAIL();
  } catch (const predict::InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("no feasible configuration"), std::string::npos);
  }
}

TEST(Planner, UsesAProfileOfTheMachinesOwnDeviceKind) {
  test::Truth gpu;
  gpu.b_sat = 64;
  gpu.a = 0.01;
  gpu.c = 0.0001;
  test::SyntheticOptions o;
  o.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  const auto gpu_profile = test::make_profile(gpu, 78, o);
  Planner planner({profile(), gpu_profile}, catalog());
  EXPECT_EQ(planner.predictor_for(0).models().compute.shape, predict::ComputeShape::Linear);
  EXPECT_EQ(planner.predictor_for(2).models().compute.shape, predict::ComputeShape::Saturating);
  auto other = gpu_profile;
  other.model.name = "vgg11";
  EXPECT_THROW(Planner({profile(), other}, catalog()), std::invalid_argument);
}

PlannerOptions single(int64_t nodes, int64_t batch, int64_t accum) {
  PlannerOptions o;
  o.space.nodes = {nodes};
  o.space.workers_per_node = {1};
  o.space.batch_per_worker = {batch};
  o.space.accumulation_steps = {accum};
  return o;
}

TEST(Planner, ExplainsAMemoryLimit) {
  auto j = test::catalog_json();
  j["machine_types"] = {j["machine_types"][0]};
  j["machine_types"][0].erase("device_memory_gib");
  j["machine_types"][0]["device_memory_bytes"] = 1000000000;  // about 115 samples fit
  const auto plan = Planner(profile(), catalog_from_json(j), single(1, 100, 8)).plan(Objective::fastest());
  EXPECT_EQ(plan.notes.limit, "memory");
  EXPECT_NE(plan.notes.explanation.find("8 accumulation steps"), std::string::npos) << plan.notes.explanation;
}

// By default accumulation is planned only at the largest per-worker batch:
// below it one batch of b k does what k micro-batches of b do, without their overhead.
TEST(Planner, AccumulatesOnlyAtTheLargestPerWorkerBatch) {
  const auto plan = Planner(profile(), catalog()).plan(Objective::knee());
  std::map<std::pair<uint32_t, int64_t>, int64_t> largest;  // (machine, workers per node) -> largest batch planned
  for (const auto& c : plan.candidates) {
    auto& l = largest[{c.machine, c.config.workers_per_node}];
    l = std::max(l, c.config.batch_per_worker);
  }
  int accumulated = 0;
  for (const auto& c : plan.candidates) {
    if (c.config.accumulation_steps == 1) continue;
    ++accumulated;
    EXPECT_EQ(c.config.batch_per_worker, (largest[{c.machine, c.config.workers_per_node}]))
        << "accumulation below the largest batch: " << c.config.batch_per_worker << " x " << c.config.accumulation_steps;
  }
  EXPECT_GT(accumulated, 0) << "accumulation is still planned where memory ends";
}

TEST(Planner, ExplainsACommunicationLimit) {
  auto j = test::catalog_json();
  j["machine_types"] = {j["machine_types"][0]};
  j["machine_types"][0]["network_gbps"] = 0.1;
  const auto plan = Planner(profile(), catalog_from_json(j), single(4, 1, 1)).plan(Objective::knee());
  EXPECT_EQ(plan.notes.limit, "communication");
  EXPECT_FALSE(plan.knee_detected);  // a one-point front has no knee
}

TEST(Planner, ExplainsAStatisticalLimit) {
  auto j = test::catalog_json();
  j["machine_types"] = {j["machine_types"][1]};  // fast network
  // Global batch 8 x 512 = 4096, far past B_noise = 600.
  const auto plan = Planner(profile(), catalog_from_json(j), single(8, 512, 1)).plan(Objective::knee());
  EXPECT_EQ(plan.notes.limit, "statistical efficiency") << plan.notes.explanation;
  EXPECT_NE(plan.notes.explanation.find("gradient noise scale"), std::string::npos);
}

TEST(Planner, TableJsonAndSvgOutputs) {
  Planner planner(profile(), catalog());
  const auto plan = planner.plan(Objective::knee());
  const auto table = format_table(plan);
  EXPECT_NE(table.find("knee"), std::string::npos);
  EXPECT_NE(table.find("* "), std::string::npos);  // the chosen row
  EXPECT_NE(table.find("Assumptions:"), std::string::npos);

  const auto j = nlohmann::json::parse(to_json(plan).dump());
  for (const char* k : {"front", "knee", "chosen", "explanation", "knee_sensitivity", "by_global_batch", "limit"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["front"].size(), plan.front.size());
  EXPECT_EQ(j["objective"], "knee");
  // The cloud of every configuration, thinned: each row a (time, cost) pair.
  const auto& rows = j["candidates"]["rows"];
  EXPECT_GT(rows.size(), 500u);
  EXPECT_LE(rows.size(), 2000u);
  EXPECT_EQ(rows[0].size(), 2u);
  EXPECT_NEAR(rows[0][0].get<double>(), plan.candidates[0].time_s, 1e-3 * plan.candidates[0].time_s);

  const auto svg = render_svg(plan);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find(">knee (chosen)</text>"), std::string::npos);
  EXPECT_NE(svg.find("Time vs global batch"), std::string::npos);
  EXPECT_NE(svg.find("Cost vs global batch"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  // Balanced elements: every opened text closes.
  size_t open = 0, close = 0;
  for (size_t at = svg.find("<text"); at != std::string::npos; at = svg.find("<text", at + 1)) ++open;
  for (size_t at = svg.find("</text>"); at != std::string::npos; at = svg.find("</text>", at + 1)) ++close;
  EXPECT_EQ(open, close);
  EXPECT_LT(svg.size(), 2'000'000u);
}

TEST(Planner, WithoutAStatisticalModelPlansForFixedEpochs) {
  test::SyntheticOptions so;
  so.gradient_noise = false;
  so.pilot_batches.clear();
  PlannerOptions o;
  o.predictor.epochs = 2;
  const auto plan = Planner(test::make_profile({}, 79, so), catalog(), o).plan(Objective::knee());
  EXPECT_FALSE(plan.goal.to_target);
  EXPECT_EQ(plan.goal.epochs, 2);
  EXPECT_NE(format_table(plan).find("Time is for 2 epoch(s)"), std::string::npos);
  EXPECT_EQ(plan.notes.explanation.find("Statistical efficiency"), std::string::npos);
  // Without the statistical penalty, bigger batches only help: given the
  // whole training set as its bound (the fixed-epoch cap replaced,
  // fixed_epochs_batch_cap_test.cpp), the fastest configuration runs at a
  // larger global batch than with it.
  o.space.max_global_batch = 60000;
  const auto with = Planner(profile(), catalog()).plan(Objective::fastest());
  const auto without = Planner(test::make_profile({}, 79, so), catalog(), o).plan(Objective::fastest());
  EXPECT_GE(without.chosen_candidate().config.global_batch(), with.chosen_candidate().config.global_batch());
}

// A space of over 1e5 configurations plans to completion; its speed is
// measured by bench/plan_bench, not asserted here.
TEST(Planner, PlansAHundredThousandConfigurations) {
  PlannerOptions o;
  for (int64_t n = 1; n <= 128; ++n) o.space.nodes.push_back(n);
  for (int64_t b = 1; b <= 1024; b *= 2) o.space.batch_per_worker.push_back(b);  // listed: every accumulation with each
  o.space.accumulation_steps = {1, 2, 3, 4, 6, 8, 12, 16};
  auto j = test::catalog_json();
  for (auto& m : j["machine_types"]) m["max_nodes"] = 128;
  Planner planner(profile(), catalog_from_json(j), o);
  const auto plan = planner.plan(Objective::knee());
  ASSERT_GE(plan.counts.enumerated, 100000);
  EXPECT_FALSE(plan.candidates.empty());
}

}  // namespace
}  // namespace tula::plan
