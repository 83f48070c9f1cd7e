#include "predict/json_fields.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict::json_fields {

std::string join(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }
std::string at(const std::string& path, size_t index) { return fmt::format("{}[{}]", path, index); }

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool has(const json& parent, const std::string& key) {
  return parent.is_object() && parent.contains(key) && !parent.at(key).is_null();
}

namespace {
const json& field(const json& parent, const std::string& key, const std::string& path) {
  if (!has(parent, key)) throw ProfileError(join(path, key) + ": missing");
  return parent.at(key);
}
}  // namespace

const json& object(const json& parent, const std::string& key, const std::string& path) {
  const auto& v = field(parent, key, path);
  if (!v.is_object()) throw ProfileError(join(path, key) + ": must be an object");
  return v;
}

const json& array(const json& parent, const std::string& key, const std::string& path) {
  const auto& v = field(parent, key, path);
  if (!v.is_array()) throw ProfileError(join(path, key) + ": must be an array");
  return v;
}

std::string text(const json& parent, const std::string& key, const std::string& path) {
  const auto& v = field(parent, key, path);
  if (!v.is_string()) throw ProfileError(join(path, key) + ": must be a string");
  return v.get<std::string>();
}

std::string text_or(const json& parent, const std::string& key, const std::string& path, const std::string& fallback) {
  return has(parent, key) ? text(parent, key, path) : fallback;
}

int64_t integer(const json& parent, const std::string& key, const std::string& path, int64_t min_value) {
  const auto& v = field(parent, key, path);
  // Accept 2.0 written by tools that print every number as a double, not 2.5.
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d) throw ProfileError(join(path, key) + ": must be an integer");
    if (d < static_cast<double>(min_value)) {
      throw ProfileError(fmt::format("{}: must be at least {}", join(path, key), min_value));
    }
    return static_cast<int64_t>(d);
  }
  if (!v.is_number_integer()) throw ProfileError(join(path, key) + ": must be an integer");
  const auto i = v.get<int64_t>();
  if (i < min_value) throw ProfileError(fmt::format("{}: must be at least {}", join(path, key), min_value));
  return i;
}

int64_t integer_or(const json& parent, const std::string& key, const std::string& path, int64_t min_value,
                   int64_t fallback) {
  return has(parent, key) ? integer(parent, key, path, min_value) : fallback;
}

double number(const json& parent, const std::string& key, const std::string& path, double min_value, bool strict) {
  const auto& v = field(parent, key, path);
  if (!v.is_number()) throw ProfileError(join(path, key) + ": must be a number");
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw ProfileError(join(path, key) + ": must be finite");
  if (strict ? !(d > min_value) : !(d >= min_value)) {
    throw ProfileError(join(path, key) + ": must be " + (strict ? "greater than " : "at least ") +
                       nlohmann::json(min_value).dump());
  }
  return d;
}

double number_or(const json& parent, const std::string& key, const std::string& path, double min_value,
                 double fallback, bool strict) {
  return has(parent, key) ? number(parent, key, path, min_value, strict) : fallback;
}

namespace forgiving {

namespace {
const json& null_value() {
  static const json null;
  return null;
}
const json& empty_array() {
  static const json empty = json::array();
  return empty;
}
}  // namespace

const json& at(const json& parent, const std::string& key) {
  if (!parent.is_object()) return null_value();
  const auto it = parent.find(key);
  return it == parent.end() ? null_value() : *it;
}

std::optional<double> number(const json& value) {
  if (!value.is_number()) return std::nullopt;
  const double d = value.get<double>();
  return std::isfinite(d) ? std::optional<double>(d) : std::nullopt;
}

std::optional<double> number(const json& parent, const std::string& key) { return number(at(parent, key)); }

std::optional<std::string> string(const json& parent, const std::string& key) {
  const json& v = at(parent, key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() || v.is_boolean()) return v.dump();
  return std::nullopt;
}

std::string text(const json& parent, const std::string& key, const std::string& fallback) {
  return string(parent, key).value_or(fallback);
}

std::optional<bool> boolean(const json& parent, const std::string& key) {
  const json& v = at(parent, key);
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}

const json& array(const json& parent, const std::string& key) {
  const json& v = at(parent, key);
  return v.is_array() ? v : empty_array();
}

const json& object(const json& parent, const std::string& key) {
  const json& v = at(parent, key);
  return v.is_object() ? v : null_value();
}

}  // namespace forgiving

std::vector<double> positive_numbers(const json& parent, const std::string& key, const std::string& path) {
  const auto& v = array(parent, key, path);
  if (v.empty()) throw ProfileError(join(path, key) + ": must hold at least one measurement");
  std::vector<double> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number()) throw ProfileError(at(join(path, key), i) + ": must be a number");
    const double d = v[i].get<double>();
    if (!std::isfinite(d) || d <= 0) throw ProfileError(at(join(path, key), i) + ": must be a positive time");
    out.push_back(d);
  }
  return out;
}

}  // namespace tula::predict::json_fields
