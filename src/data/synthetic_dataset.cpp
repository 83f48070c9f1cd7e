// Random images for timing runs: each sample is a pure function of (seed,
// split, index), generated when gathered, so a set of any size costs no
// memory and every rank and run sees the same data.
#include <fmt/format.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

#include "data/formats.hpp"
#include "data/rng.hpp"

namespace tula::data {
namespace {

// Keeps the train and test streams apart for the same seed.
constexpr uint64_t kTrainSalt = 0x7472616964617461ULL;
constexpr uint64_t kTestSalt = 0x7465737464617461ULL;

class SyntheticDataset : public Dataset {
 public:
  SyntheticDataset(int64_t size, SampleShape shape, int64_t classes, uint64_t seed)
      : size_(size), shape_(shape), classes_(classes), seed_(seed) {}

  std::string name() const override { return "synthetic"; }
  int64_t size() const override { return size_; }
  SampleShape shape() const override { return shape_; }
  int64_t num_classes() const override { return classes_; }

  Batch gather(const std::vector<int64_t>& indices) const override {
    Batch batch = gather_bytes(indices, 0);
    batch.images = batch.images.to(torch::kFloat32).mul_(1.0 / 255.0);  // x * (1/255), as these sets always were
    return batch;
  }

  // Byte values, like real images; eight pixels per random draw.
  Batch gather_bytes(const std::vector<int64_t>& indices, uint64_t /*seed*/) const override {
    const auto n = static_cast<int64_t>(indices.size());
    const int64_t pixels = shape_.channels * shape_.height * shape_.width;
    Batch batch;
    batch.images = torch::empty({n, shape_.channels, shape_.height, shape_.width}, torch::kUInt8);
    batch.labels = torch::empty({n}, torch::kInt64);
    uint8_t* image = batch.images.data_ptr<uint8_t>();
    int64_t* label = batch.labels.data_ptr<int64_t>();
    for (int64_t s = 0; s < n; ++s) {
      const int64_t index = indices[static_cast<size_t>(s)];
      if (index < 0 || index >= size_) {
        throw std::out_of_range(fmt::format("synthetic: sample index {} out of range [0, {})", index, size_));
      }
      Rng rng(mix(seed_, static_cast<uint64_t>(index)));
      label[s] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(classes_)));
      uint8_t* out = image + s * pixels;
      for (int64_t k = 0; k < pixels; k += 8) {
        uint64_t bits = rng.next();
        for (int64_t j = k; j < std::min(k + 8, pixels); ++j, bits >>= 8) out[j] = static_cast<uint8_t>(bits & 0xff);
      }
    }
    return batch;
  }

  // Pixels are uniform over {0, 1/255, ..., 1}: mean 1/2, variance
  // (256^2 - 1) / (12 * 255^2).
  std::vector<double> channel_mean() const override {
    return std::vector<double>(static_cast<size_t>(shape_.channels), 0.5);
  }
  std::vector<double> channel_std() const override {
    const double std = std::sqrt((256.0 * 256.0 - 1.0) / 12.0) / 255.0;
    return std::vector<double>(static_cast<size_t>(shape_.channels), std);
  }

 private:
  int64_t size_;
  SampleShape shape_;
  int64_t classes_;
  uint64_t seed_;
};

}  // namespace

std::shared_ptr<Dataset> open_synthetic(const DatasetOptions& options, Split split) {
  const auto& shape = options.synthetic_shape;
  if (options.synthetic_size < 0) throw std::invalid_argument("synthetic: size must be >= 0");
  if (shape.channels <= 0 || shape.height <= 0 || shape.width <= 0) {
    throw std::invalid_argument(
        fmt::format("synthetic: shape must be positive, got {}x{}x{}", shape.channels, shape.height, shape.width));
  }
  if (options.synthetic_classes <= 0)
    throw std::invalid_argument("synthetic: classes must be positive");
  const uint64_t salt = split == Split::kTrain ? kTrainSalt : kTestSalt;
  return std::make_shared<SyntheticDataset>(options.synthetic_size, shape,
                                            options.synthetic_classes, mix(options.seed, salt));
}

}  // namespace tula::data
