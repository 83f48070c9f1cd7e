// Where the pilot runs on a catalog whose nodes the backend places. The pilot
// measures the noise scale and a step time that the catalog's relative speeds
// carry to every type, so what it measures does not depend on where it runs;
// what it costs, and whether the plan after it keeps its workers, do. It runs
// at the layout its objective picks at the reference batch
// (pilot_at_reference_batch). Where that has no answer, or the user gave the
// pilot's workers or batch, it runs on the type where its steps weigh least
// under the objective (pilot_machine_type): for the cheapest and a budget,
// the type where they cost least (the nodes it takes x price per node-hour /
// relative speed, the faster of equals); for the fastest, a deadline and the
// knee, the fastest type (the cheaper of equals).
// No LibTorch here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "plan/catalog.hpp"
#include "plan/objective.hpp"
#include "plan/planner.hpp"
#include "predict/predictor.hpp"

namespace tula::tune {

// The index of that type in `catalog`; nullopt when no type holds `workers`.
std::optional<size_t> pilot_machine_type(const plan::Catalog& catalog, int64_t workers, plan::Objective::Kind objective);

// Where the pilot runs when the backend places nodes: the configuration
// `objective` picks among the catalog's layouts (types, nodes, workers per
// node) at the reference batch, as the profile predicts them. At one global
// batch every layout takes the same steps to the target, whatever the noise
// scale, so their times and costs order by the step-time model alone, which
// the profile measured; the noise scale the pilot reads decides the batch
// after it. Where the plan after the pilot keeps the reference batch (as the
// knee often does) the pilot's workers go on without a restart, and where
// that plan's layout is several nodes the pilot did not run at one node's
// speed. nullopt: no layout at that batch is feasible, or the profile does
// not fit.
std::optional<plan::Candidate> pilot_at_reference_batch(const predict::Profile& profile, const plan::Catalog& catalog,
                                                        const predict::PredictorOptions& predictor,
                                                        const plan::Objective& objective, int64_t reference_batch);

}  // namespace tula::tune
