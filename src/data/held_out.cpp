#include "data/held_out.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "data/rng.hpp"

namespace tula::data {

SubsetDataset::SubsetDataset(std::shared_ptr<Dataset> base, std::vector<int64_t> indices, std::string name)
    : base_(std::move(base)), indices_(std::move(indices)), name_(std::move(name)) {}

std::vector<int64_t> SubsetDataset::map(const std::vector<int64_t>& indices) const {
  std::vector<int64_t> mapped;
  mapped.reserve(indices.size());
  for (const int64_t i : indices) {
    if (i < 0 || i >= size()) {
      throw std::out_of_range(fmt::format("sample {} of {}, which has {}", i, name_, size()));
    }
    mapped.push_back(indices_[static_cast<size_t>(i)]);
  }
  return mapped;
}

Batch SubsetDataset::gather(const std::vector<int64_t>& indices) const { return base_->gather(map(indices)); }

Batch SubsetDataset::gather_seeded(const std::vector<int64_t>& indices, uint64_t seed) const {
  return base_->gather_seeded(map(indices), seed);
}

Batch SubsetDataset::gather_bytes(const std::vector<int64_t>& indices, uint64_t seed) const {
  return base_->gather_bytes(map(indices), seed);
}

HeldOut hold_out(const std::shared_ptr<Dataset>& train, int64_t size, uint64_t seed) {
  const int64_t n = train->size();
  if (size <= 0 || size >= n) {
    throw std::invalid_argument(fmt::format(
        "a validation split of {} samples does not fit {}'s {} training samples (it needs 0 < size < {})", size,
        train->name(), n, n));
  }
  // Fisher-Yates with the project's own generator: the same split on every
  // machine and standard library.
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  Rng rng(mix(seed, 0x76616c));  // "val": its own stream, apart from the sampler's
  for (int64_t i = n - 1; i > 0; --i) {
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(rng.below(static_cast<uint64_t>(i + 1)))]);
  }
  std::vector<int64_t> held(order.begin(), order.begin() + size), kept(order.begin() + size, order.end());
  // Ascending, so reading a split walks the base set in order.
  std::sort(held.begin(), held.end());
  std::sort(kept.begin(), kept.end());
  HeldOut h;
  h.validation = std::make_shared<SubsetDataset>(train, std::move(held), train->name() + " (validation)");
  h.train = std::make_shared<SubsetDataset>(train, std::move(kept), train->name() + " (training less validation)");
  return h;
}

}  // namespace tula::data
