#include "common/number_range.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace tula::common {
namespace {

std::string bound_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

}  // namespace

std::string describe_range(const NumberRange& r) {
  const std::string lo = bound_text(r.lo), hi = bound_text(r.hi);
  if (r.lo_open) return "a number above " + lo + " and at most " + hi;
  if (r.hi_open) return "a number from " + lo + " to below " + hi;
  return "a number from " + lo + " to " + hi;
}

bool in_range(const NumberRange& r, double v) {
  const bool above_lo = r.lo_open ? v > r.lo : v >= r.lo;
  const bool below_hi = r.hi_open ? v < r.hi : v <= r.hi;
  return above_lo && below_hi;
}

std::optional<std::string> range_refusal(const NumberRange& r, double v) {
  if (in_range(r, v)) return std::nullopt;
  return "must be " + describe_range(r) + " (got " + exact_number(v) + ")";
}

std::string exact_number(double v) { return fmt::format("{}", v); }

}  // namespace tula::common
