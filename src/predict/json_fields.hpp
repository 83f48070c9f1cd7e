// Reading JSON fields with errors that name the field by its path, so a bad
// profile or catalog says "samples.compute[3].forward_backward_s: must be
// positive" rather than a bare type error. Shared by the profile and catalog
// readers; a bad field is a ProfileError (the whole-document readers at the
// end throw the reader's own error type). The `forgiving` reads below never
// throw, for documents that are displayed rather than checked.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::predict::json_fields {

using nlohmann::json;

// The object at `path`, or a ProfileError.
const json& object(const json& parent, const std::string& key, const std::string& path);
const json& array(const json& parent, const std::string& key, const std::string& path);
bool has(const json& parent, const std::string& key);

std::string text(const json& parent, const std::string& key, const std::string& path);
std::string text_or(const json& parent, const std::string& key, const std::string& path, const std::string& fallback);
int64_t integer(const json& parent, const std::string& key, const std::string& path, int64_t min_value);
int64_t integer_or(const json& parent, const std::string& key, const std::string& path, int64_t min_value,
                   int64_t fallback);
// A finite number >= min_value (strictly greater when `strict`).
double number(const json& parent, const std::string& key, const std::string& path, double min_value,
              bool strict = false);
double number_or(const json& parent, const std::string& key, const std::string& path, double min_value,
                 double fallback, bool strict = false);
// A non-empty array of finite numbers, each > 0 (timings).
std::vector<double> positive_numbers(const json& parent, const std::string& key, const std::string& path);

std::string join(const std::string& path, const std::string& key);
std::string at(const std::string& path, size_t index);

// Forgiving reads, for JSON that is shown rather than trusted: a report page
// renders a plan written by another version of the planner, so a field that
// is missing, null, of the wrong type or under a parent that is not an object
// reads as absent (nullopt, an empty array, a null value) and nothing throws.
// The caller picks the fallback, e.g. `forgiving::number(plan, "epochs").value_or(0)`.
namespace forgiving {
// parent[key], or a null value.
const json& at(const json& parent, const std::string& key);
// A finite number; NaN, infinities and non-numbers are absent.
std::optional<double> number(const json& value);
std::optional<double> number(const json& parent, const std::string& key);
// A string as it is; a number or a boolean as its JSON text ("3", "true").
std::optional<std::string> string(const json& parent, const std::string& key);
std::string text(const json& parent, const std::string& key, const std::string& fallback);
std::optional<bool> boolean(const json& parent, const std::string& key);
// parent[key] when it is an array, else an empty array.
const json& array(const json& parent, const std::string& key);
// parent[key] when it is an object, else a null value.
const json& object(const json& parent, const std::string& key);
}  // namespace forgiving

// The whole file at `path`, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path);

// Whole documents. Each reader (profile, catalog) has its own error type, so
// these throw `Error`, whose message says which kind of document failed.

// `text` as JSON; malformed text throws Error("<what>: malformed JSON: ...").
template <typename Error>
json parse_document(const std::string& text, const std::string& what) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(what + ": malformed JSON: " + e.what());
  }
}

// The file at `path` read by `parse` (its text to a value). A file that cannot
// be read throws Error("cannot open <what> <path>"); an Error from `parse`
// gets the path in front.
template <typename Error, typename Parse>
auto parse_file(const std::string& path, const std::string& what, const Parse& parse) {
  const auto text = read_file(path);
  if (!text) throw Error("cannot open " + what + " " + path);
  try {
    return parse(*text);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace tula::predict::json_fields
