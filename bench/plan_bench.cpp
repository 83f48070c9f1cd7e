// Planner speed (issue 3: 1e5 configurations in well under a second), on a
// synthetic profile and the test catalog widened to 128 nodes per type.
//   build-plan/bench/tula_plan_bench --benchmark_counters_tabular=true
#include <benchmark/benchmark.h>

#include "plan/planner.hpp"
#include "plan/test_catalog.hpp"
#include "predict/synthetic_profile.hpp"

namespace {

tula::plan::Planner make_planner() {
  tula::plan::PlannerOptions o;
  for (int64_t n = 1; n <= 128; ++n) o.space.nodes.push_back(n);
  o.space.accumulation_steps = {1, 2, 3, 4, 6, 8, 12, 16};
  auto j = tula::test::catalog_json();
  for (auto& m : j["machine_types"]) m["max_nodes"] = 128;
  return tula::plan::Planner(tula::test::make_profile({}, 77), tula::plan::catalog_from_json(j), o);
}

// Enumerate and predict every configuration: the planner's inner loop.
void BM_EvaluateSpace(benchmark::State& state) {
  const auto planner = make_planner();
  std::vector<tula::plan::Candidate> out;
  size_t feasible = 0;
  for (auto _ : state) {
    feasible = planner.evaluate_space(out);
    benchmark::DoNotOptimize(out.data());
  }
  const auto plan = planner.plan(tula::plan::Objective::knee());
  state.counters["configs"] = static_cast<double>(plan.counts.enumerated);
  state.counters["feasible"] = static_cast<double>(feasible);
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(plan.counts.enumerated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_EvaluateSpace)->Unit(benchmark::kMillisecond);

// The whole plan: enumeration, front, knee and its sensitivity, intervals
// along the front, the chosen prediction and its explanation.
void BM_Plan(benchmark::State& state) {
  const auto planner = make_planner();
  int64_t enumerated = 0;
  for (auto _ : state) {
    const auto plan = planner.plan(tula::plan::Objective::knee());
    enumerated = plan.counts.enumerated;
    benchmark::DoNotOptimize(plan.chosen);
  }
  state.counters["configs"] = static_cast<double>(enumerated);
  state.counters["configs_per_s"] =
      benchmark::Counter(static_cast<double>(enumerated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Plan)->Unit(benchmark::kMillisecond);

// One configuration with intervals (400 parameter draws): what `tula predict` does.
void BM_PredictWithIntervals(benchmark::State& state) {
  const auto profile = tula::test::make_profile({}, 77);
  const auto predictor = tula::predict::Predictor::from_profile(profile);
  const auto machine = tula::predict::profiled_machine(profile);
  for (auto _ : state) benchmark::DoNotOptimize(predictor.predict({1, 2, 64, 1}, machine));
}
BENCHMARK(BM_PredictWithIntervals)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
