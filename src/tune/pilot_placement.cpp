#include "tune/pilot_placement.hpp"

namespace tula::tune {

std::optional<size_t> pilot_machine_type(const plan::Catalog& catalog, int64_t workers) {
  std::optional<size_t> best;
  for (size_t i = 0; i < catalog.machines.size(); ++i) {
    const auto& m = catalog.machines[i];
    if (m.max_nodes * m.spec.max_workers_per_node < workers) continue;
    if (!best) {
      best = i;
      continue;
    }
    const auto& b = catalog.machines[*best].spec;
    if (m.spec.relative_speed > b.relative_speed ||
        (m.spec.relative_speed == b.relative_speed && m.spec.price_per_hour < b.price_per_hour)) {
      best = i;
    }
  }
  return best;
}

}  // namespace tula::tune
