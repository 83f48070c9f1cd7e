#include "profile/grid.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

namespace tula::profile {

std::vector<int64_t> geometric_grid(int64_t first, int64_t last, double ratio) {
  if (first < 1 || last < first || !(ratio > 1)) {
    throw std::invalid_argument(fmt::format(
        "geometric grid needs 1 <= first <= last and ratio > 1 (got {}, {}, {:f})", first, last, ratio));
  }
  std::vector<int64_t> out;
  double x = static_cast<double>(first);
  while (static_cast<int64_t>(std::llround(x)) <= last) {
    const auto v = static_cast<int64_t>(std::llround(x));
    if (out.empty() || v > out.back()) out.push_back(v);
    x *= ratio;
  }
  if (out.back() != last) out.push_back(last);
  return out;
}

std::vector<int64_t> parse_int_list(const std::string& text, const std::string& option) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || v < 1) {
      throw std::invalid_argument(option + ": '" + item + "' is not a positive integer (expected a list like 8,16,32)");
    }
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument(option + ": empty list");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<int64_t> parse_shape(const std::string& text, const std::string& option) {
  const std::string error = option + " must look like CxHxW, e.g. 3x32x32 (got '" + text + "')";
  std::vector<int64_t> dims;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, 'x')) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(item, &used);
    } catch (const std::exception&) {
      throw std::invalid_argument(error);
    }
    if (used != item.size() || v < 1) throw std::invalid_argument(error);
    dims.push_back(v);
  }
  if (dims.size() != 3 || text.back() == 'x') throw std::invalid_argument(error);
  return dims;
}

std::vector<int64_t> message_sizes(int64_t gradient_bytes, double ratio) {
  constexpr int64_t kSmallest = 4096;
  const int64_t largest = std::max<int64_t>(kSmallest, (gradient_bytes + 3) / 4 * 4);
  auto grid = geometric_grid(kSmallest, largest, ratio);
  // A size just below the gradient's adds a near-duplicate point and no
  // leverage on the bandwidth: the gradient size takes its place.
  if (grid.size() >= 3 && static_cast<double>(grid[grid.size() - 1]) < std::sqrt(ratio) * grid[grid.size() - 2]) {
    grid.erase(grid.end() - 2);
  }
  // The allreduce fit needs three sizes, and a bandwidth it can tell from
  // the per-message latency's noise: a small model's link is measured with
  // messages past its gradient too, up to at least 1 MiB (they cost about a
  // millisecond each). With an 8.4 KiB gradient (two small layers) and
  // messages up to 67 KiB, the fitted 1/bandwidth came out below zero and the
  // profile failed.
  constexpr int64_t kLargestAtLeast = 1 << 20;
  while (grid.size() < 3 || grid.back() < kLargestAtLeast) {
    grid.push_back(static_cast<int64_t>(static_cast<double>(grid.back()) * ratio));
  }
  for (auto& b : grid) b = (b + 3) / 4 * 4;
  return grid;
}

}  // namespace tula::profile
