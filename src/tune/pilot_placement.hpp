// Where the pilot runs on a catalog whose nodes the backend places. The pilot
// measures the noise scale and a step time that the catalog's relative speeds
// carry to every type, so what it measures does not depend on the type; what
// it costs does. It runs where its steps weigh least under the objective:
// for the cheapest and a budget, the type where they cost least (the nodes it
// takes x price per node-hour / relative speed, the faster of equals), where
// the cheapest plan is likely to train, so a plan that keeps it goes on in
// the pilot's launch; for the fastest, a deadline and the knee, the fastest
// type (the cheaper of equals), so the plan comes soonest.
// No LibTorch here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "plan/catalog.hpp"
#include "plan/objective.hpp"

namespace tula::tune {

// The index of that type in `catalog`; nullopt when no type holds `workers`.
std::optional<size_t> pilot_machine_type(const plan::Catalog& catalog, int64_t workers, plan::Objective::Kind objective);

}  // namespace tula::tune
