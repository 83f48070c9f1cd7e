// Where the pilot runs on a catalog whose nodes the backend places. The pilot
// measures the noise scale and a step time that the catalog's relative speeds
// carry to every type, so what it measures does not depend on the type; what
// it costs does. It runs where its steps weigh least under the objective:
// for the cheapest and a budget, the type where they cost least (the nodes it
// takes x price per node-hour / relative speed, the faster of equals), where
// the cheapest plan is likely to train, so a plan that keeps it goes on in
// the pilot's launch; for the fastest, a deadline and the knee, the fastest
// type (the cheaper of equals), so the plan comes soonest.
// Where the models can plan before the pilot (from the profile's noise read
// and the history's prior), the pilot runs at that plan's layout instead
// (pilot_at_layout); the type by the objective is for where they cannot.
// No LibTorch here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "plan/catalog.hpp"
#include "plan/objective.hpp"
#include "predict/predictor.hpp"

namespace tula::tune {

// The index of that type in `catalog`; nullopt when no type holds `workers`.
std::optional<size_t> pilot_machine_type(const plan::Catalog& catalog, int64_t workers, plan::Objective::Kind objective);

// The pilot at the layout of `planned`, the configuration the plan made
// before the pilot chose: its nodes and workers per node, sharing
// `reference_batch` (at least one sample each). The global batch stays the
// reference, so the pilot's steps and noise read are the default's
// trajectory wherever it runs; where the plan after the pilot keeps that
// layout at the reference batch, its workers go on without a restart, and
// where the knee is not one node the pilot does not run a share of the job
// at one node's speed.
predict::Config pilot_at_layout(const predict::Config& planned, int64_t reference_batch);

}  // namespace tula::tune
