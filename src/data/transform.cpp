#include "data/transform.hpp"

#include <fmt/format.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "data/rng.hpp"

namespace tula::data {
namespace {

// Separate streams, so enabling one augmentation does not change the
// choices of the other.
constexpr uint64_t kCropStream = 1;
constexpr uint64_t kFlipStream = 2;

// torchvision's RandomCrop(size, padding): pad with zeros on every side, then
// cut the original size at an offset drawn uniformly in [0, 2 * padding] on
// each axis, independently per sample.
torch::Tensor random_crop(const torch::Tensor& images, int64_t padding, uint64_t seed) {
  const int64_t n = images.size(0);
  const int64_t height = images.size(2);
  const int64_t width = images.size(3);
  const auto padded = torch::constant_pad_nd(images, {padding, padding, padding, padding}, 0);
  auto out = torch::empty_like(images);
  Rng rng(seed);
  const auto offsets = static_cast<uint64_t>(2 * padding + 1);
  for (int64_t i = 0; i < n; ++i) {
    const auto top = static_cast<int64_t>(rng.below(offsets));
    const auto left = static_cast<int64_t>(rng.below(offsets));
    out.select(0, i).copy_(padded.select(0, i).narrow(1, top, height).narrow(2, left, width));
  }
  return out;
}

torch::Tensor random_flip(const torch::Tensor& images, uint64_t seed) {
  const int64_t n = images.size(0);
  Rng rng(seed);
  std::vector<int64_t> flipped;
  for (int64_t i = 0; i < n; ++i) {
    if (rng.next() >> 63) flipped.push_back(i);
  }
  if (flipped.empty()) return images;
  const auto index = torch::tensor(at::ArrayRef<int64_t>(flipped), torch::kInt64);
  return images.index_copy(0, index, images.index_select(0, index).flip({3}));
}

// Mean or std as a [1, C, 1, 1] tensor; one value applies to every channel.
torch::Tensor channel_tensor(const std::vector<double>& values, int64_t channels,
                             const torch::Tensor& like, const char* what) {
  const auto count = static_cast<int64_t>(values.size());
  if (count != 1 && count != channels) {
    throw std::invalid_argument(fmt::format("transform: {} has {} values for {} channels", what, count, channels));
  }
  auto t = torch::tensor(values, torch::TensorOptions().dtype(torch::kFloat64));
  return t.to(like.scalar_type()).view({1, count, 1, 1});
}

}  // namespace

Batch apply_transform(Batch batch, const TransformOptions& options, uint64_t seed) {
  const torch::NoGradGuard no_grad;
  torch::Tensor x = batch.images;
  if (x.dim() != 4) {
    throw std::invalid_argument(fmt::format("transform: images must be [N, C, H, W], got {} dimensions", x.dim()));
  }
  const bool has_samples = x.size(0) > 0;
  if (x.scalar_type() == torch::kUInt8 && (options.image_size > 0 || !options.mean.empty() || !options.std.empty())) {
    throw std::invalid_argument("transform: a batch of bytes is resized and normalized on the device, not here");
  }
  // Augment at the data set's size, before any resize: cheaper, and the
  // padding means the same fraction of the image as in the usual recipes.
  if (options.train && options.crop_padding > 0 && has_samples) {
    x = random_crop(x, options.crop_padding, mix(seed, kCropStream));
  }
  if (options.train && options.horizontal_flip && has_samples) {
    x = random_flip(x, mix(seed, kFlipStream));
  }
  if (options.image_size < 0) throw std::invalid_argument("transform: image_size must be >= 0");
  if (options.image_size > 0 && (x.size(2) != options.image_size || x.size(3) != options.image_size)) {
    x = resize_images(x, options.image_size);
  }
  if (!options.mean.empty() || !options.std.empty()) normalize_images_(x, options.mean, options.std);
  batch.images = x;
  return batch;
}

torch::Tensor resize_images(const torch::Tensor& images, int64_t size) {
  namespace F = torch::nn::functional;
  if (images.size(0) == 0) {
    // interpolate rejects empty batches; the shape is all that matters.
    return torch::empty({0, images.size(1), size, size}, images.options());
  }
  return F::interpolate(images, F::InterpolateFuncOptions()
                                    .size(std::vector<int64_t>{size, size})
                                    .mode(torch::kBilinear)
                                    .align_corners(false));
}

void normalize_images_(torch::Tensor& images, const std::vector<double>& mean, const std::vector<double>& std) {
  if (mean.empty() || std.empty()) throw std::invalid_argument("transform: give both mean and std, or neither");
  for (const double s : std) {
    if (!(s > 0)) throw std::invalid_argument("transform: std values must be positive");
  }
  // In place: the batch is the caller's own, and a batch of 64 images at
  // 224 is 38 MiB that two temporaries would map and fault in again.
  const int64_t channels = images.size(1);
  images.sub_(channel_tensor(mean, channels, images, "mean")).div_(channel_tensor(std, channels, images, "std"));
}

}  // namespace tula::data
