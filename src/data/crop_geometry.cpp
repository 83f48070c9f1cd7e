#include "data/crop_geometry.hpp"

#include <algorithm>
#include <cmath>

namespace tula::data {
namespace {

constexpr double kMinArea = 0.08, kMaxArea = 1.0;
constexpr double kMinRatio = 3.0 / 4.0, kMaxRatio = 4.0 / 3.0;

// Uniform in [0, 1) from the top 53 bits.
double uniform(Rng& rng) { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53; }

// Python's round(), torch.round(): half to even (the default rounding mode).
int64_t round_even(double v) { return static_cast<int64_t>(std::nearbyint(v)); }

}  // namespace

CropBox random_resized_crop(ImageSize image, Rng& rng) {
  const double area = static_cast<double>(image.width) * static_cast<double>(image.height);
  const double log_min = std::log(kMinRatio), log_max = std::log(kMaxRatio);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * (kMinArea + (kMaxArea - kMinArea) * uniform(rng));
    const double ratio = std::exp(log_min + (log_max - log_min) * uniform(rng));
    const int64_t w = round_even(std::sqrt(target * ratio));
    const int64_t h = round_even(std::sqrt(target / ratio));
    if (w > 0 && w <= image.width && h > 0 && h <= image.height) {
      const auto top = static_cast<int64_t>(rng.below(static_cast<uint64_t>(image.height - h + 1)));
      const auto left = static_cast<int64_t>(rng.below(static_cast<uint64_t>(image.width - w + 1)));
      return {top, left, h, w};
    }
  }
  // Every draw fell outside the image (a very long or tall one): the centre
  // at the nearest allowed ratio.
  const double in_ratio = static_cast<double>(image.width) / static_cast<double>(image.height);
  int64_t w = image.width, h = image.height;
  if (in_ratio < kMinRatio) {
    h = round_even(static_cast<double>(w) / kMinRatio);
  } else if (in_ratio > kMaxRatio) {
    w = round_even(static_cast<double>(h) * kMaxRatio);
  }
  return {(image.height - h) / 2, (image.width - w) / 2, h, w};
}

ResizePlan crop_then_resize(CropBox box, int64_t size) {
  ResizePlan p;
  p.x = {static_cast<double>(box.left), static_cast<double>(box.width), size, 0, size};
  p.y = {static_cast<double>(box.top), static_cast<double>(box.height), size, 0, size};
  return p;
}

ResizePlan resize_then_center_crop(ImageSize image, int64_t size, double crop) {
  const int64_t shorter = round_even(static_cast<double>(size) / crop);
  int64_t rw = shorter, rh = shorter;
  // torchvision: the longer side is int(size * long / short).
  if (image.width <= image.height) {
    rh = shorter * image.height / image.width;
  } else {
    rw = shorter * image.width / image.height;
  }
  ResizePlan p;
  // CenterCrop: int(round((resized - size) / 2.0)).
  p.x = {0, static_cast<double>(image.width), rw, round_even(static_cast<double>(rw - size) / 2.0), size};
  p.y = {0, static_cast<double>(image.height), rh, round_even(static_cast<double>(rh - size) / 2.0), size};
  return p;
}

ResizePlan rescale(const ResizePlan& plan, ImageSize image, ImageSize decoded) {
  const double sx = static_cast<double>(decoded.width) / static_cast<double>(image.width);
  const double sy = static_cast<double>(decoded.height) / static_cast<double>(image.height);
  ResizePlan p = plan;
  p.x.start *= sx;
  p.x.length *= sx;
  p.y.start *= sy;
  p.y.length *= sy;
  return p;
}

}  // namespace tula::data
