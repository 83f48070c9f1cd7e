#include "plan/local_catalog.hpp"

#include <stdexcept>

#include "predict/predictor.hpp"

namespace tula::plan {

Catalog local_catalog(const predict::Profile& profile, double price_per_hour, const std::string& currency) {
  if (!(price_per_hour >= 0)) throw std::invalid_argument("the local price per hour must be non-negative");
  MachineType local;
  local.spec = predict::profiled_machine(profile);
  local.spec.name = "local";
  local.spec.price_per_hour = price_per_hour;
  local.max_nodes = 1;
  local.speed_given = true;  // it is the profiled machine: relative speed 1
  local.speed_resolved = true;
  Catalog catalog;
  catalog.currency = currency;
  catalog.machines.push_back(local);
  return catalog;
}

}  // namespace tula::plan
