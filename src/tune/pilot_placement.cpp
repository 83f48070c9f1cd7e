#include "tune/pilot_placement.hpp"

#include "predict/error.hpp"

namespace tula::tune {

namespace {

bool counts_money(plan::Objective::Kind objective) {
  return objective == plan::Objective::Kind::Cheapest || objective == plan::Objective::Kind::Budget;
}

// The pilot's money per unit of its work on a type: the nodes its workers
// take, at the type's price, for the time its speed gives the steps.
double money_per_work(const plan::MachineType& m, int64_t workers) {
  const int64_t per_node = m.spec.max_workers_per_node;
  const int64_t nodes = (workers + per_node - 1) / per_node;
  return static_cast<double>(nodes) * m.spec.price_per_hour / m.spec.relative_speed;
}

// Whether `m` is a better place than `best` for the pilot.
bool better(const plan::MachineType& m, const plan::MachineType& best, int64_t workers, bool money) {
  const double speed = m.spec.relative_speed, best_speed = best.spec.relative_speed;
  if (money) {
    const double cost = money_per_work(m, workers), best_cost = money_per_work(best, workers);
    return cost < best_cost || (cost == best_cost && speed > best_speed);
  }
  return speed > best_speed || (speed == best_speed && m.spec.price_per_hour < best.spec.price_per_hour);
}

}  // namespace

std::optional<size_t> pilot_machine_type(const plan::Catalog& catalog, int64_t workers, plan::Objective::Kind objective) {
  const bool money = counts_money(objective);
  std::optional<size_t> best;
  for (size_t i = 0; i < catalog.machines.size(); ++i) {
    const auto& m = catalog.machines[i];
    if (m.max_nodes * m.spec.max_workers_per_node < workers) continue;
    if (!best || better(m, catalog.machines[*best], workers, money)) best = i;
  }
  return best;
}

std::optional<plan::Candidate> pilot_at_reference_batch(const predict::Profile& profile, const plan::Catalog& catalog,
                                                        const predict::PredictorOptions& predictor,
                                                        const plan::Objective& objective, int64_t reference_batch) {
  plan::PlannerOptions options;
  options.predictor = predictor;
  options.space.min_global_batch = options.space.max_global_batch = reference_batch;
  options.space.accumulation_steps = {1};
  try {
    return plan::Planner(profile, catalog, options).plan(objective).chosen_candidate();
  } catch (const predict::InfeasibleError&) {
    return std::nullopt;
  } catch (const predict::FitError&) {
    return std::nullopt;
  }
}

}  // namespace tula::tune
