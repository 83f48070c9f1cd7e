// CPU planning on recorded profiles of this project's 2-core machines: what
// `tula tune --resources local` plans over (this machine as a one-type
// catalog, one node), the emulated cluster's catalog (several nodes) and the
// CPU types of the example catalog. The expected configurations and times
// were taken from the planner before machine types named their devices and
// links (commit f41bc2c); the device-aware catalog and predictor must leave
// every one of them as it was. Five of the profiles have no statistical
// model, so their plans are for fixed epochs, which since then hold the
// global batch to a cap (plan/batch_cap.hpp); these rows pin the time model,
// so they plan with the training set as the bound, as before the cap
// (what the cap plans is fixed_epochs_batch_cap_test.cpp's).
#include <gtest/gtest.h>

#include <string>

#include "plan/catalog.hpp"
#include "plan/local_catalog.hpp"
#include "plan/planner.hpp"
#include "plan/single_node.hpp"
#include "predict/profile.hpp"

namespace tula::plan {
namespace {

std::string source(const std::string& relative) { return std::string(TULA_SOURCE_DIR) + "/" + relative; }

struct Expected {
  std::string profile;   // under the source tree
  std::string catalog;   // "local" or a file under catalogs/
  std::string machine;   // the chosen type
  int64_t nodes, workers_per_node, batch_per_worker, accumulation_steps;
  double time_s;         // the chosen configuration's predicted time
};

// Only the CPU types: the example catalog's GPU types name devices no CPU
// profile can speak for.
Catalog cpu_types_of(Catalog c) {
  std::erase_if(c.machines, [](const MachineType& m) { return m.spec.device_kind != "cpu"; });
  return c;
}

Plan plan_for(const Expected& e) {
  const auto profile = predict::load_profile(source(e.profile));
  predict::PredictorOptions options;
  SpaceOptions space;
  space.max_global_batch = profile.data.train_samples;
  if (e.catalog == "local") {
    return single_node_planner(profile, local_catalog(profile), options, {}, space).plan(Objective::knee());
  }
  const auto catalog = cpu_types_of(load_catalog(source("catalogs/" + e.catalog)));
  return multi_node_planner(profile, catalog, options, space).plan(Objective::knee());
}

// A tiny model fits any per-worker batch the space holds, so accumulating
// micro-batches only adds steps' overhead: on the recorded LeNet-5 and
// small_cnn profiles with pilots (plans to the target), every objective on
// the emulated cluster's and the example's CPU types plans without it.
TEST(RecordedProfilePlan, TinyModelsPlanNoAccumulationUnderAnyObjective) {
  for (const std::string profile_path : {"bench/results/decision_oracle_round50_lenet5/profile.json",
                                         "bench/results/decision_oracle_round51_cheapest_lenet5/profile.json",
                                         "bench/results/decision_oracle_round49_fastest_small_cnn/profile.json"}) {
    const auto profile = predict::load_profile(source(profile_path));
    for (const std::string catalog : {"emulated.json", "example.json"}) {
      const auto planner = multi_node_planner(profile, cpu_types_of(load_catalog(source("catalogs/" + catalog))), {});
      for (const auto& objective : {Objective::knee(), Objective::fastest(), Objective::cheapest()}) {
        const auto plan = planner.plan(objective);
        EXPECT_EQ(plan.chosen_candidate().config.accumulation_steps, 1)
            << profile_path << " on " << catalog << ", " << to_string(objective) << ": batch "
            << plan.chosen_candidate().config.batch_per_worker;
      }
    }
  }
}

class RecordedProfilePlan : public ::testing::TestWithParam<Expected> {};

TEST_P(RecordedProfilePlan, PlansTheSameConfigurationAsBefore) {
  const auto& e = GetParam();
  const auto plan = plan_for(e);
  const auto& chosen = plan.chosen_candidate();
  const auto& c = chosen.config;
  EXPECT_EQ(plan.machines[chosen.machine].spec.name, e.machine);
  EXPECT_EQ(c.nodes, e.nodes);
  EXPECT_EQ(c.workers_per_node, e.workers_per_node);
  EXPECT_EQ(c.batch_per_worker, e.batch_per_worker);
  EXPECT_EQ(c.accumulation_steps, e.accumulation_steps);
  EXPECT_NEAR(chosen.time_s, e.time_s, 1e-9 * e.time_s) << "the predicted time moved";
}

INSTANTIATE_TEST_SUITE_P(
    OnThisMachinesProfiles, RecordedProfilePlan,
    ::testing::Values(
        Expected{"bench/results/tune/small_cnn-sim-profile.json", "local", "local", 1, 2, 16, 1, 87.34430458138003},
        Expected{"bench/results/tune/small_cnn-sim-profile.json", "emulated.json", "emu-one", 2, 1, 64, 1,
                 92.085900557670286},
        Expected{"bench/results/tune/small_cnn-sim-profile.json", "example.json", "c7i.2xlarge", 8, 2, 16, 1,
                 15.978960669799807},
        Expected{"bench/results/profiles/small_cnn.json", "local", "local", 1, 2, 1024, 1, 16.155579842098454},
        Expected{"bench/results/profiles/resnet20.json", "local", "local", 1, 4, 512, 1, 20.320346627700051},
        Expected{"bench/results/profiles/resnet20.json", "example.json", "c7i.2xlarge", 16, 1, 128, 1,
                 1.9012414227198564},
        Expected{"bench/results/decision_oracle_round52_fastest_small_cnn/profile.json", "local", "local", 1, 2, 512,
                 1, 28.523728367841258},
        Expected{"bench/results/decision_oracle_round51_cheapest_lenet5/profile.json", "emulated.json", "emu-half", 4,
                 1, 8192, 1, 6.2610454681343448}));

}  // namespace
}  // namespace tula::plan
