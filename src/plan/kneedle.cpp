#include "plan/kneedle.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tula::plan {

namespace {

std::vector<double> normalized(const std::vector<double>& v, Scale scale) {
  std::vector<double> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (scale == Scale::Log && !(v[i] > 0)) throw std::invalid_argument("kneedle: log scale needs positive values");
    out[i] = scale == Scale::Log ? std::log(v[i]) : v[i];
  }
  const auto [lo, hi] = std::minmax_element(out.begin(), out.end());
  const double a = *lo, span = *hi - *lo;
  for (auto& e : out) e = span > 0 ? (e - a) / span : 0.0;
  return out;
}

}  // namespace

KneedleResult kneedle(const std::vector<double>& x, const std::vector<double>& y, Curve curve, Direction direction,
                      double sensitivity, Scale scale) {
  if (x.size() != y.size()) throw std::invalid_argument("kneedle: x and y differ in length");
  for (size_t i = 1; i < x.size(); ++i) {
    if (!(x[i] > x[i - 1])) throw std::invalid_argument("kneedle: x must be strictly increasing");
  }
  KneedleResult r;
  const size_t n = x.size();
  r.difference.assign(n, 0.0);
  if (n < 3) return r;
  auto xn = normalized(x, scale), yn = normalized(y, scale);
  // To concave increasing: convex curves flip y, decreasing ones (after
  // that) flip x; the scan then runs in the flipped x's increasing order.
  const bool flip_y = curve == Curve::Convex;
  const bool flip_x = (curve == Curve::Concave) == (direction == Direction::Decreasing);
  for (size_t i = 0; i < n; ++i) {
    const double xt = flip_x ? 1 - xn[i] : xn[i];
    const double yt = flip_y ? 1 - yn[i] : yn[i];
    r.difference[i] = yt - xt;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = flip_x ? n - 1 - i : i;
  r.max_difference = static_cast<size_t>(std::max_element(r.difference.begin(), r.difference.end()) - r.difference.begin());

  // The normalized x spans exactly [0, 1] over n - 1 gaps.
  const double mean_dx = 1.0 / static_cast<double>(n - 1);
  constexpr size_t none = static_cast<size_t>(-1);
  size_t candidate = none;  // the last local maximum not yet confirmed or dropped
  double threshold = 0;
  for (size_t s = 1; s + 1 < n; ++s) {
    const size_t prev = order[s - 1], cur = order[s], next = order[s + 1];
    const double d = r.difference[cur];
    if (candidate != none && d < threshold) {
      r.knees.push_back(candidate);
      candidate = none;
    }
    if (d >= r.difference[prev] && d > r.difference[next]) {
      candidate = cur;
      threshold = d - sensitivity * mean_dx;
    }
  }
  if (candidate != none && r.difference[order[n - 1]] < threshold) r.knees.push_back(candidate);
  if (!r.knees.empty()) {
    r.knee = *std::max_element(r.knees.begin(), r.knees.end(),
                               [&](size_t a, size_t b) { return r.difference[a] < r.difference[b]; });
  }
  return r;
}

}  // namespace tula::plan
