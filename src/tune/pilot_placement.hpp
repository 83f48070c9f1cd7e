// Where the pilot runs on a catalog whose nodes the backend places. The pilot
// measures the noise scale and a step time that the catalog's relative speeds
// carry to every type, so it runs where its steps take least: the fastest
// type that holds its workers, the cheaper of equals.
// No LibTorch here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>

#include "plan/catalog.hpp"

namespace tula::tune {

// The index of that type in `catalog`; nullopt when no type holds `workers`.
std::optional<size_t> pilot_machine_type(const plan::Catalog& catalog, int64_t workers);

}  // namespace tula::tune
