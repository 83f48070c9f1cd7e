// The price catalog the planner chooses machines from: machine types with
// their devices, memory, network and price per node-hour, as JSON
// ("tula-catalog", version 1; see docs/models.md for an example).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/predictor.hpp"

namespace tula::plan {

inline constexpr const char* kCatalogFormat = "tula-catalog";
inline constexpr int kCatalogVersion = 1;

// A catalog that cannot be planned over: malformed, a missing field (a
// machine type without a price above all), a duplicate name. The message names
// the field by its JSON path.
class CatalogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MachineType {
  predict::MachineSpec spec;    // name, device kind, devices, memory, price, network, relative speed
  int64_t max_nodes = 1;
  bool speed_given = false;     // relative_speed was in the catalog (lets a type without its own profile be planned)
};

struct Catalog {
  std::string currency = "USD";
  std::vector<MachineType> machines;
};

Catalog parse_catalog(const std::string& text);
Catalog catalog_from_json(const nlohmann::json& j);
Catalog load_catalog(const std::string& path);
nlohmann::json to_json(const Catalog& c);

}  // namespace tula::plan
