#include "tune/emulated_cluster.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace tula::tune {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "tula-emulated-cluster";
constexpr int kVersion = 1;

std::runtime_error bad(const std::string& path, const std::string& what) {
  return std::runtime_error("the emulated cluster's state " + path + ": " + what);
}

std::string text_field(const json& j, const std::string& key, const std::string& path, const std::string& at) {
  if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
    throw bad(path, (at.empty() ? key : at + "." + key) + ": missing or not a non-empty string");
  }
  return j[key].get<std::string>();
}

EmulatedNode read_node(const json& j, const std::string& path, const std::string& at) {
  if (!j.is_object()) throw bad(path, at + ": not an object");
  EmulatedNode n;
  n.name = text_field(j, "name", path, at);
  n.machine_type = text_field(j, "machine_type", path, at);
  n.address = text_field(j, "address", path, at);
  n.netns = text_field(j, "netns", path, at);
  n.host_link = text_field(j, "host_link", path, at);
  if (!j.contains("cgroups") || !j["cgroups"].is_array() || j["cgroups"].empty()) {
    throw bad(path, at + ".cgroups: missing or empty (the node's CPU share lives there)");
  }
  for (const auto& c : j["cgroups"]) {
    if (!c.is_string()) throw bad(path, at + ".cgroups: holds something other than a path");
    n.cgroups.push_back(c.get<std::string>());
  }
  if (!j.contains("cpus") || !j["cpus"].is_number() || j["cpus"].get<double>() <= 0) {
    throw bad(path, at + ".cpus: missing or not a positive number");
  }
  n.cpus = j["cpus"].get<double>();
  return n;
}

}  // namespace

std::vector<EmulatedNode> EmulatedCluster::nodes_of_type(const std::string& machine_type) const {
  std::vector<EmulatedNode> out;
  for (const auto& n : nodes) {
    if (n.machine_type == machine_type) out.push_back(n);
  }
  return out;
}

EmulatedCluster read_emulated_cluster(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw bad(path, "cannot be read; is the cluster up? (scripts/emulated-cluster start)");
  std::stringstream text;
  text << in.rdbuf();
  const json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw bad(path, "not a JSON object");
  if (j.value("format", "") != kFormat) throw bad(path, std::string("format: not '") + kFormat + "'");
  if (j.value("version", 0) != kVersion) {
    throw bad(path, "version: " + j.value("version", json()).dump() + " is not the one this tula reads (1)");
  }
  EmulatedCluster c;
  c.path = path;
  c.prefix = text_field(j, "prefix", path, "");
  c.latency_emulated = j.value("latency_emulated", false);
  if (j.contains("slurm_conf") && j["slurm_conf"].is_string()) c.slurm_conf = j["slurm_conf"].get<std::string>();
  if (!j.contains("nodes") || !j["nodes"].is_array() || j["nodes"].empty()) throw bad(path, "nodes: missing or empty");
  for (size_t i = 0; i < j["nodes"].size(); ++i) {
    c.nodes.push_back(read_node(j["nodes"][i], path, fmt::format("nodes[{}]", i)));
  }
  return c;
}

}  // namespace tula::tune
