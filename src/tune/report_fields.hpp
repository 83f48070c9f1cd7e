// Reading the plan's part of a report (records::TuneReport::plan, the
// planner's own JSON, which the typed record keeps as it is): every accessor
// answers "absent" (nullopt, an empty array, a null value) for a missing key,
// a null, a value of the wrong type or a parent that is not an object, and
// never throws, so that a plan of another version still renders.
// No LibTorch here.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace tula::tune::fields {

using nlohmann::json;

inline const json& null_value() {
  static const json n;
  return n;
}
inline const json& empty_array() {
  static const json a = json::array();
  return a;
}

// j[key], or null.
inline const json& at(const json& j, const std::string& key) {
  if (!j.is_object()) return null_value();
  const auto it = j.find(key);
  return it == j.end() ? null_value() : *it;
}

inline std::optional<double> number(const json& v) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}
inline std::optional<double> number(const json& j, const std::string& key) { return number(at(j, key)); }

inline std::optional<std::string> string(const json& j, const std::string& key) {
  const json& v = at(j, key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::nullopt;
}
inline std::string text(const json& j, const std::string& key, const std::string& missing) {
  return string(j, key).value_or(missing);
}

inline std::optional<bool> boolean(const json& j, const std::string& key) {
  const json& v = at(j, key);
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}

// j[key] when it is an array, else an empty one.
inline const json& array(const json& j, const std::string& key) {
  const json& v = at(j, key);
  return v.is_array() ? v : empty_array();
}

// j[key] when it is an object, else null.
inline const json& object(const json& j, const std::string& key) {
  const json& v = at(j, key);
  return v.is_object() ? v : null_value();
}

}  // namespace tula::tune::fields
