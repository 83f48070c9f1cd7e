#include "data/sampler.hpp"

#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "data/rng.hpp"

namespace tula::data {

DistributedSampler::DistributedSampler(SamplerOptions options) : options_(std::move(options)) {
  if (options_.world_size < 1) {
    throw std::invalid_argument(fmt::format("sampler: world_size must be >= 1, got {}", options_.world_size));
  }
  if (options_.rank < 0 || options_.rank >= options_.world_size) {
    throw std::invalid_argument(
        fmt::format("sampler: rank {} out of range [0, {})", options_.rank, options_.world_size));
  }
  if (options_.dataset_size < 0) throw std::invalid_argument("sampler: dataset_size must be >= 0");
}

int64_t DistributedSampler::per_rank() const {
  const int64_t world = options_.world_size;
  if (options_.drop_last) return options_.dataset_size / world;
  return (options_.dataset_size + world - 1) / world;
}

std::vector<int64_t> DistributedSampler::indices(int64_t epoch) const {
  const int64_t n = options_.dataset_size;
  const int64_t world = options_.world_size;
  const int64_t count = per_rank();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (options_.shuffle && n > 1) {
    // Seeded by seed + epoch as PyTorch does, so every rank draws the same
    // permutation without communicating. Fisher-Yates, last slot first.
    Rng rng(mix(options_.seed + static_cast<uint64_t>(epoch), 0));
    for (int64_t i = n - 1; i > 0; --i) {
      const auto j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(i + 1)));
      std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
    }
  }
  // Rank r takes positions r, r + world, ... of the permutation, padded by
  // wrapping around to count * world entries (or truncated with drop_last).
  std::vector<int64_t> shard;
  shard.reserve(static_cast<size_t>(count));
  for (int64_t k = 0; k < count; ++k) {
    const int64_t position = options_.rank + k * world;
    shard.push_back(order[static_cast<size_t>(position % n)]);
  }
  return shard;
}

}  // namespace tula::data
