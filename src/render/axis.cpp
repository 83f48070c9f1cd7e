#include "render/axis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::render {

namespace {

using common::format_number;

constexpr size_t kMaxTicks = 8;

std::string duration_label(double v) {
  const double a = std::abs(v);
  if (a == 0) return "0";
  if (a < 60) return common::format_seconds(v);
  if (a < 3600) return format_number(v / 60, 3) + " min";
  if (a < 2 * 86400) return format_number(v / 3600, 3) + " h";
  return format_number(v / 86400, 3) + " d";
}

std::string money_label(double v, const std::string& currency) {
  const std::string n = format_number(std::abs(v), 3);
  if (currency.empty() || currency == "USD") return (v < 0 ? "-$" : "$") + n;
  return (v < 0 ? "-" : "") + n + " " + currency;
}

// 512, 2k (batches are powers of two, so 1024 is "1k").
std::string batch_label(double v) {
  if (v != std::floor(v) || std::abs(v) > 1e15) return format_number(v, 6);
  const auto b = static_cast<int64_t>(v);
  return b >= 1024 && b % 1024 == 0 ? fmt::format("{}k", b / 1024) : fmt::format("{}", b);
}

// Round times a reader knows, finest first.
const std::vector<std::vector<double>>& round_times() {
  static const std::vector<std::vector<double>> lists = {
      {1e-3, 2e-3, 5e-3, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600,
       7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 30 * 86400},
      {1e-3, 0.01, 0.1, 1, 10, 60, 600, 3600, 6 * 3600, 86400, 7 * 86400, 30 * 86400}};
  return lists;
}

// m x 10^e for each mantissa m over the decades [lo, hi] (log10 units).
std::vector<double> decades(double lo, double hi, const std::vector<double>& mantissas) {
  std::vector<double> out;
  for (int e = static_cast<int>(std::floor(lo)); e <= static_cast<int>(std::ceil(hi)); ++e) {
    for (double m : mantissas) out.push_back(m * std::pow(10.0, e));
  }
  return out;
}

// Powers of 2^k over [lo, hi] (log10 units), at exponents that are multiples of k.
std::vector<double> powers_of_two(double lo, double hi, int k) {
  std::vector<double> out;
  const int first = static_cast<int>(std::floor(lo / std::log10(2.0)));
  const int last = static_cast<int>(std::ceil(hi / std::log10(2.0)));
  for (int e = first - (first % k + k) % k; e <= last; e += k) out.push_back(std::ldexp(1.0, e));
  return out;
}

// Candidate tick lists for a log axis, finest first.
std::vector<std::vector<double>> log_candidates(Unit unit, double lo, double hi) {
  std::vector<std::vector<double>> lists;
  if (unit == Unit::Seconds) lists = round_times();
  if (unit == Unit::Batch) {
    for (int k = 1; k <= 8; ++k) lists.push_back(powers_of_two(lo, hi, k));
    return lists;
  }
  for (const auto& mantissas : {std::vector<double>{1, 2, 5}, std::vector<double>{1, 3}, std::vector<double>{1}}) {
    lists.push_back(decades(lo, hi, mantissas));
  }
  return lists;
}

// A step of about a sixth of the range: 1, 2 or 5 x 10^n, or a round time.
double nice_step(double lo, double hi, Unit unit) {
  const double raw = (hi - lo) / 6;
  if (unit == Unit::Seconds && raw >= 1) {
    for (double s : {1.0,        2.0,        5.0,         10.0,    15.0,        20.0,       30.0,   60.0,
                     120.0,      300.0,      600.0,       900.0,   1200.0,      1800.0,     3600.0, 7200.0,
                     3 * 3600.0, 6 * 3600.0, 12 * 3600.0, 86400.0, 2 * 86400.0, 7 * 86400.0}) {
      if (s >= raw) return s;
    }
  }
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

std::vector<double> linear_ticks(double lo, double hi, Unit unit) {
  std::vector<double> t;
  if (!(hi > lo)) return t;
  const double step = nice_step(lo, hi, unit);
  for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    t.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  }
  return t;
}

// Every k-th tick, so that at most kMaxTicks remain.
std::vector<double> thinned(const std::vector<double>& ticks) {
  if (ticks.size() <= kMaxTicks) return ticks;
  std::vector<double> out;
  const size_t k = (ticks.size() + kMaxTicks - 1) / kMaxTicks;
  for (size_t i = 0; i < ticks.size(); i += k) out.push_back(ticks[i]);
  return out;
}

bool wants_log(const std::vector<double>& values, ScaleKind kind) {
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  switch (kind) {
    case ScaleKind::Linear:
      return false;
    case ScaleKind::Log:
      return *mx > 0;
    case ScaleKind::Auto:
      break;
  }
  return *mn > 0 && *mx / *mn > 20;
}

}  // namespace

std::string tick_label(double v, const Axis& axis) {
  switch (axis.unit) {
    case Unit::Seconds:
      return duration_label(v);
    case Unit::Percent:
      return format_number(100 * v, 4) + "%";
    case Unit::Money:
      return money_label(v, axis.currency);
    case Unit::Batch:
      return batch_label(v);
    case Unit::Number:
      break;
  }
  return format_number(v, 6);
}

Scale Scale::fit(std::vector<double> values, const Axis& axis, double p0, double p1) {
  Scale s;
  s.p0_ = p0, s.p1_ = p1, s.unit_ = axis.unit;
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  if (values.empty()) return s;
  if (wants_log(values, axis.scale)) {
    std::erase_if(values, [](double v) { return v <= 0; });
    const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
    const double lo = std::log10(*mn), hi = std::log10(*mx);
    const double pad = 0.04 * (hi - lo) + 0.02;  // room at both ends, some even for a single value
    s.log_ = true, s.lo_ = lo - pad, s.hi_ = hi + pad;
    return s;
  }
  const auto [mn, mx] = std::minmax_element(values.begin(), values.end());
  double lo = *mn, hi = *mx;
  const bool zero = axis.from_zero && lo >= 0;
  if (zero) lo = 0;
  if (hi == lo) {  // one value: a range around it
    const double d = hi == 0 ? 1 : std::abs(hi) * 0.1;
    lo = zero ? 0 : lo - d;
    hi += d;
  }
  const double pad = 0.05 * (hi - lo);
  s.lo_ = zero ? 0 : lo - pad, s.hi_ = hi + pad;
  return s;
}

double Scale::operator()(double v) const {
  const double d = log_ ? std::log10(std::max(v, 1e-300)) : v;
  return p0_ + (d - lo_) / (hi_ - lo_) * (p1_ - p0_);
}

bool Scale::drawable(double v) const { return std::isfinite(v) && (!log_ || v > 0); }

bool Scale::inside(double v) const {
  const double d = log_ ? std::log10(v) : v;
  return d >= lo_ - 1e-9 * std::abs(lo_) && d <= hi_ + 1e-9 * std::abs(hi_);
}

std::vector<double> Scale::ticks() const { return log_ ? log_ticks() : linear_ticks(lo_, hi_, unit_); }

// The finest candidate list that puts 2 to 8 ticks inside; a range too wide
// for any gets every k-th tick of the coarsest list with too many, and one
// too narrow for two gets linear ticks, which a log axis places just as well.
std::vector<double> Scale::log_ticks() const {
  std::vector<double> too_many;
  for (const auto& list : log_candidates(unit_, lo_, hi_)) {
    std::vector<double> t;
    std::copy_if(list.begin(), list.end(), std::back_inserter(t), [&](double v) { return inside(v); });
    if (t.size() >= 2 && t.size() <= kMaxTicks) return t;
    if (t.size() > kMaxTicks) too_many = std::move(t);
  }
  if (!too_many.empty()) return thinned(too_many);
  return linear_ticks(std::pow(10.0, lo_), std::pow(10.0, hi_), unit_);
}

}  // namespace tula::render
