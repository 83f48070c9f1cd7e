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

// The device a catalog's relative_speed is against. Each field given must
// match the profile's device: its name as the device reports it, its kind,
// and for a CPU its cores. None given: the profiled device, whatever it is
// (older catalogs; kept for CPU types planned from CPU profiles).
struct SpeedReference {
  std::string device;  // "NVIDIA H100 80GB HBM3", "Intel(R) Xeon(R) Processor", ...; "": any
  std::string kind;    // "cpu", "cuda"; "": any
  int64_t cores = 0;   // a CPU's usable cores; 0: any

  bool named() const { return !device.empty() || !kind.empty() || cores > 0; }
  std::string describe() const;  // "'NVIDIA H100 80GB HBM3'", "a 2-core cpu"
  bool operator==(const SpeedReference&) const = default;
};

struct MachineType {
  predict::MachineSpec spec;    // name, device kind, devices, memory, price, network, links, relative speed
  int64_t max_nodes = 1;
  bool speed_given = false;     // relative_speed was in the catalog (lets a type without its own profile be planned)
  double catalog_speed = 1;     // relative_speed as the catalog gives it (spec.relative_speed may be resolved since)
  SpeedReference speed_relative_to;  // what relative_speed is against (the catalog's, unless the type names its own)
  // relative_speed is already the factor against one profile's device
  // (plan/device_speed.hpp resolved it, or the type is the profiled machine).
  bool speed_resolved = false;
  std::string link_source;      // where the intra-node link's figures come from (a citation)
};

struct Catalog {
  std::string currency = "USD";
  // Whether a launch waiting in the cluster's queue for its nodes is billed
  // as if it held them (nodes reserved and paid for whether busy or not);
  // false: a waiting job holds no node and costs nothing (Slurm's own
  // accounting, and a cloud that starts nodes when the job starts).
  bool queue_wait_billed = false;
  SpeedReference speed_relative_to;  // the default for every type
  std::vector<MachineType> machines;
};

Catalog parse_catalog(const std::string& text);
Catalog catalog_from_json(const nlohmann::json& j);
Catalog load_catalog(const std::string& path);
nlohmann::json to_json(const Catalog& c);

}  // namespace tula::plan
