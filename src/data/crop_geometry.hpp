// Where a sample's pixels come from: torchvision's RandomResizedCrop for
// training and Resize + CenterCrop for evaluation, worked out from the
// image's size alone (before decoding), so the decoder can be told the
// smallest scale and the rows and columns the sample needs.
#pragma once
#include <cstdint>

#include "data/pixels.hpp"
#include "data/rng.hpp"

namespace tula::data {

// One axis of "resize the source segment [start, start + length) to `resized`
// pixels, and keep pixels [offset, offset + size) of the result".
struct AxisResize {
  double start = 0;
  double length = 0;
  int64_t resized = 0;
  int64_t offset = 0;
  int64_t size = 0;
};

struct ResizePlan {
  AxisResize x;
  AxisResize y;
};

// torchvision's RandomResizedCrop box: rows [top, top + height), columns
// [left, left + width).
struct CropBox {
  int64_t top = 0;
  int64_t left = 0;
  int64_t height = 0;
  int64_t width = 0;
};

// RandomResizedCrop.get_params with scale (0.08, 1) and ratio (3/4, 4/3):
// up to 10 draws of an area fraction and a log-uniform aspect ratio, the
// first box that fits wins; else the central crop of the widest allowed
// ratio. Rounding is half to even, as torch's and Python's.
CropBox random_resized_crop(ImageSize image, Rng& rng);

// The box resized to size x size.
ResizePlan crop_then_resize(CropBox box, int64_t size);

// Resize(round(size / crop)) then CenterCrop(size): the shorter side to
// 1/crop of the sample (crop 7/8: 256 for 224, the usual ImageNet
// evaluation; crop 1: the shorter side to the sample's) and the
// longer in proportion (truncated, as torchvision), then the centre.
ResizePlan resize_then_center_crop(ImageSize image, int64_t size, double crop = 0.875);

// The smallest DCT scale, in eighths (1, 2, 4 or 8), at which
// `decoded(eighths)` of the image still gives the plan's source segments at
// least as many pixels as they are resized to, so the resampler only ever
// shrinks (or keeps) what the decoder gives it; 8 when even the full image
// is smaller. Only 1/8, 1/4 and 1/2: libjpeg-turbo decodes those (and 8/8)
// with SIMD inverse DCTs, while 3/8, 5/8, 6/8 and 7/8 run plain C transforms
// (and twice as large ones for subsampled chroma) that are slower than a
// whole decode at 8/8 (measured: bench/loader_speed.py, docs/benchmarks/your-model.md).
template <class DecodedSize>
int dct_eighths(const ResizePlan& plan, ImageSize image, DecodedSize decoded) {
  for (const int eighths : {1, 2, 4}) {
    const ImageSize d = decoded(eighths);
    const double sx = static_cast<double>(d.width) / static_cast<double>(image.width);
    const double sy = static_cast<double>(d.height) / static_cast<double>(image.height);
    if (plan.x.length * sx >= static_cast<double>(plan.x.resized) &&
        plan.y.length * sy >= static_cast<double>(plan.y.resized)) {
      return eighths;
    }
  }
  return 8;
}

// The plan in the coordinates of the image decoded at `decoded` size.
ResizePlan rescale(const ResizePlan& plan, ImageSize image, ImageSize decoded);

}  // namespace tula::data
