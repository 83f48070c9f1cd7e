// Planning on one node: this machine (plan::local_catalog) or one node of each
// machine type a backend gives; or on several, where the backend places
// nodes. `tula train --batch-size auto` and `tula tune` both plan here.
// No LibTorch here.
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
// `fixed` names; the rest of the space as `space` gives it (a global batch
// range, a measured noise scale: batch_cap.hpp).
Planner single_node_planner(const predict::Profile& profile, const Catalog& catalog,
                            const predict::PredictorOptions& predictor, const FixedConfig& fixed = {},
                            SpaceOptions space = {});

// The planner over 1, 2, 4, ... nodes of each machine type, up to its
// max_nodes: for a backend that places workers on several nodes (the
// emulated cluster). `space` as above.
Planner multi_node_planner(const predict::Profile& profile, const Catalog& catalog,
                           const predict::PredictorOptions& predictor, SpaceOptions space = {});

}  // namespace tula::plan
