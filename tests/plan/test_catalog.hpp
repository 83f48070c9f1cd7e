// A small price catalog for the planner tests: two CPU node types (matching
// the synthetic CPU profile) and one GPU type carrying the synthetic GPU,
// planned from a CPU profile by its speed against the synthetic CPU.
#pragma once
#include <nlohmann/json.hpp>

namespace tula::test {

inline nlohmann::json catalog_json() {
  return {{"format", "tula-catalog"},
          {"version", 1},
          {"currency", "USD"},
          {"machine_types",
           {{{"name", "cpu.small"},
             {"device_kind", "cpu"},
             {"devices_per_node", 1},
             {"max_workers_per_node", 4},
             {"device_memory_gib", 16},
             {"price_per_hour", 0.40},
             {"network_gbps", 10},
             {"network_latency_us", 30},
             {"max_nodes", 16}},
            {{"name", "cpu.large"},
             {"device_kind", "cpu"},
             {"devices_per_node", 1},
             {"max_workers_per_node", 16},
             {"device_memory_gib", 64},
             {"price_per_hour", 1.60},
             {"network_gbps", 25},
             {"network_latency_us", 20},
             {"max_nodes", 8}},
            {{"name", "gpu.a"},
             {"device_kind", "cuda"},
             {"accelerator", {{"model", "Synthetic GPU"}, {"count", 4}, {"memory_bytes", 24000000000}}},
             {"price_per_hour", 12.0},
             {"network_gbps", 100},
             {"network_latency_us", 10},
             {"max_nodes", 4},
             {"relative_speed", 8},
             {"speed_relative_to", "Synthetic CPU"}}}}};
}

}  // namespace tula::test
