#include "plan/single_node.hpp"

#include <utility>

namespace tula::plan {

Planner single_node_planner(const predict::Profile& profile, const Catalog& catalog,
                            const predict::PredictorOptions& predictor, const FixedConfig& fixed, SpaceOptions space) {
  PlannerOptions options;
  options.predictor = predictor;
  options.space = std::move(space);
  options.space.nodes = {1};
  if (fixed.workers) options.space.workers_per_node = {*fixed.workers};
  if (fixed.batch_per_worker) options.space.batch_per_worker = {*fixed.batch_per_worker};
  if (fixed.accumulation_steps) options.space.accumulation_steps = {*fixed.accumulation_steps};
  return Planner(profile, catalog, options);
}

Planner multi_node_planner(const predict::Profile& profile, const Catalog& catalog,
                           const predict::PredictorOptions& predictor, SpaceOptions space) {
  PlannerOptions options;
  options.predictor = predictor;
  options.space = std::move(space);  // nodes as given; empty: every count up to max_nodes
  return Planner(profile, catalog, options);
}

}  // namespace tula::plan
