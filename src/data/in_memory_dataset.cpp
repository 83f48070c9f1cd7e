#include "data/in_memory_dataset.hpp"

#include <fmt/format.h>
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace tula::data {

InMemoryDataset::InMemoryDataset(std::string name, torch::Tensor images, torch::Tensor labels,
                                 int64_t num_classes)
    : name_(std::move(name)),
      images_(std::move(images)),
      labels_(std::move(labels)),
      num_classes_(num_classes) {
  if (images_.dim() != 4 || images_.scalar_type() != torch::kUInt8) {
    throw std::invalid_argument(name_ + ": images must be uint8 [N, C, H, W]");
  }
  if (labels_.dim() != 1 || labels_.scalar_type() != torch::kInt64 ||
      labels_.size(0) != images_.size(0)) {
    throw std::invalid_argument(name_ + ": labels must be int64 [N] matching the images");
  }
  if (num_classes_ <= 0) throw std::invalid_argument(name_ + ": num_classes must be positive");
  images_ = images_.contiguous();
  labels_ = labels_.contiguous();
}

int64_t InMemoryDataset::size() const { return images_.size(0); }

SampleShape InMemoryDataset::shape() const {
  return {images_.size(1), images_.size(2), images_.size(3)};
}

torch::Tensor InMemoryDataset::index_of(const std::vector<int64_t>& indices) const {
  const int64_t n = size();
  for (const int64_t i : indices) {
    if (i < 0 || i >= n) {
      throw std::out_of_range(fmt::format("{}: sample index {} out of range [0, {})", name_, i, n));
    }
  }
  return torch::tensor(at::ArrayRef<int64_t>(indices), torch::kInt64);
}

Batch InMemoryDataset::gather(const std::vector<int64_t>& indices) const {
  Batch batch = gather_bytes(indices, 0);
  batch.images = batch.images.to(torch::kFloat32).div_(255.0);
  return batch;
}

Batch InMemoryDataset::gather_bytes(const std::vector<int64_t>& indices, uint64_t /*seed*/) const {
  const torch::NoGradGuard no_grad;
  const auto index = index_of(indices);
  Batch batch;
  batch.images = images_.index_select(0, index);
  batch.labels = labels_.index_select(0, index);
  return batch;
}

// A histogram of the 256 byte values per channel gives exact mean and
// standard deviation in one cheap pass, with no float accumulation error.
void InMemoryDataset::compute_stats() const {
  const int64_t n = images_.size(0);
  const int64_t channels = images_.size(1);
  const int64_t plane = images_.size(2) * images_.size(3);
  const uint8_t* data = images_.data_ptr<uint8_t>();
  mean_.assign(static_cast<size_t>(channels), 0.0);
  std_.assign(static_cast<size_t>(channels), 0.0);
  for (int64_t c = 0; c < channels; ++c) {
    std::array<uint64_t, 256> histogram{};
    for (int64_t i = 0; i < n; ++i) {
      const uint8_t* p = data + (i * channels + c) * plane;
      for (int64_t k = 0; k < plane; ++k) ++histogram[p[k]];
    }
    const double count = static_cast<double>(n * plane);
    if (count == 0) continue;
    double sum = 0;
    for (int v = 0; v < 256; ++v) sum += static_cast<double>(histogram[v]) * (v / 255.0);
    const double mean = sum / count;
    double squares = 0;
    for (int v = 0; v < 256; ++v) {
      const double d = v / 255.0 - mean;
      squares += static_cast<double>(histogram[v]) * d * d;
    }
    mean_[static_cast<size_t>(c)] = mean;
    std_[static_cast<size_t>(c)] = std::sqrt(squares / count);
  }
}

std::vector<double> InMemoryDataset::channel_mean() const {
  std::call_once(stats_once_, [this] { compute_stats(); });
  return mean_;
}

std::vector<double> InMemoryDataset::channel_std() const {
  std::call_once(stats_once_, [this] { compute_stats(); });
  return std_;
}

}  // namespace tula::data
