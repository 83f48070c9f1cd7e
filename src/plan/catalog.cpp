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

SpeedReference read_reference(const json& e, const std::string& at) {
  const json& r = e.at("speed_relative_to");
  const std::string here = jf::join(at, "speed_relative_to");
  SpeedReference ref;
  if (r.is_string()) {
    ref.device = r.get<std::string>();
  } else if (r.is_object()) {
    ref.device = jf::text_or(r, "device", here, "");
    ref.kind = jf::text_or(r, "kind", here, "");
    ref.cores = jf::integer_or(r, "cores", here, 1, 0);
  } else {
    throw CatalogError(here + ": the device relative_speed is against: a device name, or an object with device, "
                              "kind and cores");
  }
  if (!ref.named()) throw CatalogError(here + ": names no device (give device, kind or cores)");
  return ref;
}

json to_json(const SpeedReference& r) {
  if (r.kind.empty() && r.cores == 0) return r.device;
  json j = json::object();
  if (!r.device.empty()) j["device"] = r.device;
  if (!r.kind.empty()) j["kind"] = r.kind;
  if (r.cores > 0) j["cores"] = r.cores;
  return j;
}

// "accelerator": {"model", "count", "memory_bytes" or "memory_gib"}: the
// device a GPU type carries, as devices_per_node and device_memory_* say it
// (those may be given instead, not beside it).
void read_accelerator(const json& e, const std::string& here, predict::MachineSpec& s) {
  const auto& a = jf::object(e, "accelerator", here);
  const std::string at = here + ".accelerator";
  for (const char* flat : {"devices_per_node", "device_memory_bytes", "device_memory_gib"}) {
    if (jf::has(e, flat)) throw CatalogError(here + "." + flat + ": give it in accelerator, not beside it");
  }
  s.accelerator_model = jf::text(a, "model", at);
  if (s.accelerator_model.empty()) throw CatalogError(at + ".model: empty; the device's name as it reports itself");
  s.devices_per_node = jf::integer(a, "count", at, 1);
  if (jf::has(a, "memory_bytes")) {
    s.device_memory_bytes = jf::integer(a, "memory_bytes", at, 1);
  } else if (jf::has(a, "memory_gib")) {
    s.device_memory_bytes = static_cast<int64_t>(jf::number(a, "memory_gib", at, 0.0, true) * (1LL << 30));
  } else {
    throw CatalogError(at + ".memory_bytes: missing (or give memory_gib)");
  }
}

// "intra_node_link": {"kind", "gbytes_per_s", "latency_us", "source"}.
void read_intra_node_link(const json& e, const std::string& here, MachineType& m) {
  const auto& l = jf::object(e, "intra_node_link", here);
  const std::string at = here + ".intra_node_link";
  m.spec.intra_node.kind = jf::text_or(l, "kind", at, "");
  m.spec.intra_node.gbytes_per_s = jf::number(l, "gbytes_per_s", at, 0.0, true);
  m.spec.intra_node.latency_s = jf::number_or(l, "latency_us", at, 0.0, 0.0) * 1e-6;
  m.link_source = jf::text_or(l, "source", at, "");
}

MachineType read_machine(const json& e, const std::string& at, const SpeedReference& catalog_reference) {
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
  const bool accelerator = jf::has(e, "accelerator");
  s.device_kind = accelerator ? jf::text_or(e, "device_kind", here, "cuda") : jf::text(e, "device_kind", here);
  s.devices_per_node = jf::integer_or(e, "devices_per_node", here, 1, 1);
  if (accelerator) {
    read_accelerator(e, here, s);
  } else if (jf::has(e, "device_memory_bytes")) {
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
  if (jf::has(e, "intra_node_link")) read_intra_node_link(e, here, m);
  m.speed_given = jf::has(e, "relative_speed");
  s.relative_speed = jf::number_or(e, "relative_speed", here, 0.0, 1.0, true);
  m.catalog_speed = s.relative_speed;
  m.speed_relative_to = jf::has(e, "speed_relative_to") ? read_reference(e, here) : catalog_reference;
  s.allreduce_on_cores = jf::number_or(e, "allreduce_on_cores", here, 0.0, 0.0);
  if (s.allreduce_on_cores > 1) {
    throw CatalogError(fmt::format("{}.allreduce_on_cores: is {:g}; a share of the allreduce's time, from 0 to 1", here,
                                   s.allreduce_on_cores));
  }
  return m;
}

}  // namespace

std::string SpeedReference::describe() const {
  if (!device.empty()) {
    return "'" + device + "'" + (cores > 0 ? fmt::format(" with {} core{}", cores, cores == 1 ? "" : "s") : "");
  }
  std::string out = cores > 0 ? fmt::format("a {}-core ", cores) : "a ";
  return out + (kind.empty() ? std::string("device") : kind);
}

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
    if (jf::has(j, "queue_wait_billed")) {
      const auto& billed = j.at("queue_wait_billed");
      if (!billed.is_boolean()) throw CatalogError("queue_wait_billed: expected true or false, got " + billed.dump());
      c.queue_wait_billed = billed.get<bool>();
    }
    if (jf::has(j, "speed_relative_to")) c.speed_relative_to = read_reference(j, "");
    const auto& arr = jf::array(j, "machine_types", "");
    if (arr.empty()) throw CatalogError("machine_types: empty; the catalog lists no machine to plan over");
    std::set<std::string> names;
    for (size_t i = 0; i < arr.size(); ++i) {
      auto m = read_machine(arr[i], jf::at("machine_types", i), c.speed_relative_to);
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
    if (m.speed_given) e["relative_speed"] = m.catalog_speed;
    if (m.speed_relative_to.named() && !(m.speed_relative_to == c.speed_relative_to)) {
      e["speed_relative_to"] = to_json(m.speed_relative_to);
    }
    if (s.allreduce_on_cores > 0) e["allreduce_on_cores"] = s.allreduce_on_cores;
    if (!s.accelerator_model.empty()) {
      e["accelerator"] = {{"model", s.accelerator_model}, {"count", s.devices_per_node},
                          {"memory_bytes", s.device_memory_bytes}};
      for (const char* flat : {"devices_per_node", "device_memory_bytes"}) e.erase(flat);
    }
    if (s.intra_node.gbytes_per_s > 0) {
      json link = {{"gbytes_per_s", s.intra_node.gbytes_per_s}};
      if (!s.intra_node.kind.empty()) link["kind"] = s.intra_node.kind;
      if (s.intra_node.latency_s > 0) link["latency_us"] = std::round(s.intra_node.latency_s * 1e12) / 1e6;
      if (!m.link_source.empty()) link["source"] = m.link_source;
      e["intra_node_link"] = link;
    }
    arr.push_back(e);
  }
  json out = {{"format", kCatalogFormat}, {"version", kCatalogVersion}, {"currency", c.currency}};
  if (c.speed_relative_to.named()) out["speed_relative_to"] = to_json(c.speed_relative_to);
  if (c.queue_wait_billed) out["queue_wait_billed"] = true;
  out["machine_types"] = arr;
  return out;
}

}  // namespace tula::plan
