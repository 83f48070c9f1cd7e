// The settings a profile measures at: geometric grids of batch sizes and
// message sizes, and the comma-separated lists users give instead. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tula::profile {

// first, first*ratio, first*ratio^2, ... while <= last, then `last` itself
// when the ratio stepped over it (so the largest setting is always measured).
// Throws std::invalid_argument for first < 1, last < first or ratio <= 1.
std::vector<int64_t> geometric_grid(int64_t first, int64_t last, double ratio);

// "8,16,32" -> {8, 16, 32}: positive integers, sorted, duplicates removed.
// Throws std::invalid_argument naming `option` and the bad entry.
std::vector<int64_t> parse_int_list(const std::string& text, const std::string& option);

// "3x32x32" -> {3, 32, 32}. Throws std::invalid_argument naming `option`.
std::vector<int64_t> parse_shape(const std::string& text, const std::string& option);

// Allreduce message sizes for a model with `gradient_bytes` of gradients:
// 4 KiB, then x`ratio` up to and including the gradient size (which is what
// the engine's buckets send at most), rounded to whole floats; a size within
// sqrt(ratio) below the gradient size is dropped in favour of it. At least
// three sizes (the fit's minimum): a small model's grid goes on past its gradient.
std::vector<int64_t> message_sizes(int64_t gradient_bytes, double ratio);

}  // namespace tula::profile
