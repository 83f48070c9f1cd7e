// Planning on one node: this machine (plan::local_catalog) or one node of each
// machine type a backend gives. `tula train --batch-size auto` and `tula tune`
// both plan here, through this one function. No LibTorch here.
#pragma once
#include <cstdint>
#include <optional>

#include "plan/catalog.hpp"
#include "plan/planner.hpp"
#include "predict/predictor.hpp"
#include "predict/profile.hpp"

namespace tula::plan {

// What the user fixed of the configuration; nullopt: the planner chooses.
struct FixedConfig {
  std::optional<int64_t> workers, batch_per_worker, accumulation_steps;
};

// The planner over one node of each machine type in `catalog`, holding what
// `fixed` names.
Planner single_node_planner(const predict::Profile& profile, const Catalog& catalog,
                            const predict::PredictorOptions& predictor, const FixedConfig& fixed = {});

}  // namespace tula::plan
