#include "plan/catalog.hpp"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "predict/error.hpp"
#include "predict/json_fields.hpp"

namespace tula::plan {

namespace jf = predict::json_fields;
using nlohmann::json;

namespace {

MachineType read_machine(const json& e, const std::string& at) {
  if (!e.is_object()) throw CatalogError(at + ": must be an object");
  MachineType m;
  auto& s = m.spec;
  s.name = jf::text(e, "name", at);
  const std::string here = at + " (" + s.name + ")";
  if (!jf::has(e, "price_per_hour")) {
    throw CatalogError(here + ".price_per_hour: missing; a catalog without prices cannot be planned over "
                       "(give each machine type its price per node-hour)");
  }
  s.price_per_hour = jf::number(e, "price_per_hour", here, 0.0, true);
  s.device_kind = jf::text(e, "device_kind", here);
  s.devices_per_node = jf::integer_or(e, "devices_per_node", here, 1, 1);
  if (jf::has(e, "device_memory_bytes")) {
    s.device_memory_bytes = jf::integer(e, "device_memory_bytes", here, 1);
  } else if (jf::has(e, "device_memory_gib")) {
    s.device_memory_bytes = static_cast<int64_t>(jf::number(e, "device_memory_gib", here, 0.0, true) * (1LL << 30));
  } else {
    throw CatalogError(here + ".device_memory_bytes: missing (or give device_memory_gib)");
  }
  s.max_workers_per_node = jf::integer_or(e, "max_workers_per_node", here, 1, s.devices_per_node);
  s.network_gbps = jf::number(e, "network_gbps", here, 0.0, true);
  s.network_latency_s = jf::number_or(e, "network_latency_us", here, 0.0, 0.0) * 1e-6;
  m.max_nodes = jf::integer_or(e, "max_nodes", here, 1, 1);
  m.speed_given = jf::has(e, "relative_speed");
  s.relative_speed = jf::number_or(e, "relative_speed", here, 0.0, 1.0, true);
  s.allreduce_on_cores = jf::number_or(e, "allreduce_on_cores", here, 0.0, 0.0);
  if (s.allreduce_on_cores > 1) {
    throw CatalogError(fmt::format("{}.allreduce_on_cores: is {:g}; a share of the allreduce's time, from 0 to 1", here,
                                   s.allreduce_on_cores));
  }
  return m;
}

}  // namespace

Catalog catalog_from_json(const json& j) {
  try {
    if (!j.is_object()) throw CatalogError("catalog: must be a JSON object");
    const auto format = jf::text(j, "format", "");
    if (format != kCatalogFormat) {
      throw CatalogError("format: is '" + format + "', expected '" + kCatalogFormat + "'");
    }
    const auto version = jf::integer(j, "version", "", 0);
    if (version != kCatalogVersion) {
      throw CatalogError(fmt::format("version: catalog format version {} is not the one this tula reads ({})",
                                     version, kCatalogVersion));
    }
    Catalog c;
    c.currency = jf::text_or(j, "currency", "", "USD");
    const auto& arr = jf::array(j, "machine_types", "");
    if (arr.empty()) throw CatalogError("machine_types: empty; the catalog lists no machine to plan over");
    std::set<std::string> names;
    for (size_t i = 0; i < arr.size(); ++i) {
      auto m = read_machine(arr[i], jf::at("machine_types", i));
      if (!names.insert(m.spec.name).second) {
        throw CatalogError(jf::at("machine_types", i) + ".name: '" + m.spec.name + "' appears twice");
      }
      c.machines.push_back(std::move(m));
    }
    return c;
  } catch (const predict::ProfileError& e) {
    throw CatalogError(e.what());
  }
}

Catalog parse_catalog(const std::string& text) {
  return catalog_from_json(jf::parse_document<CatalogError>(text, "catalog"));
}

Catalog load_catalog(const std::string& path) { return jf::parse_file<CatalogError>(path, "catalog", parse_catalog); }

json to_json(const Catalog& c) {
  json arr = json::array();
  for (const auto& m : c.machines) {
    const auto& s = m.spec;
    json e = {{"name", s.name},
              {"device_kind", s.device_kind},
              {"devices_per_node", s.devices_per_node},
              {"max_workers_per_node", s.max_workers_per_node},
              {"device_memory_bytes", s.device_memory_bytes},
              {"price_per_hour", s.price_per_hour},
              {"network_gbps", s.network_gbps},
              // Rounded to a picosecond so a catalog written back reads the same.
              {"network_latency_us", std::round(s.network_latency_s * 1e12) / 1e6},
              {"max_nodes", m.max_nodes}};
    if (m.speed_given) e["relative_speed"] = s.relative_speed;
    if (s.allreduce_on_cores > 0) e["allreduce_on_cores"] = s.allreduce_on_cores;
    arr.push_back(e);
  }
  return {{"format", kCatalogFormat}, {"version", kCatalogVersion}, {"currency", c.currency}, {"machine_types", arr}};
}

}  // namespace tula::plan
