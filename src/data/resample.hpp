// Bilinear resampling from decoded 8-bit pixels to a float sample, the way
// PIL's resize(BILINEAR) does it (what torchvision's transforms call on the
// images ImageFolder loads): a triangle filter widened by the shrink factor
// when shrinking, so every source pixel counts (no aliasing from skipped
// pixels), and plain bilinear interpolation when enlarging. Values stay float
// through both passes, where PIL rounds to 8 bits after each.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "data/crop_geometry.hpp"
#include "data/pixels.hpp"

namespace tula::data {

// The source pixels and weights of each output pixel along one axis.
struct AxisTaps {
  std::vector<int64_t> first;   // first source pixel of output i
  std::vector<int64_t> count;   // how many
  std::vector<float> weights;   // count[i] weights of output i at i * stride, summing to 1
  int64_t stride = 0;
  int64_t lo = 0, hi = 0;       // the source pixels read: [lo, hi)

  const float* weights_of(int64_t i) const { return weights.data() + i * stride; }
};

// Taps for the plan's kept outputs along one axis of a source `extent`
// pixels long. The filter reads only the plan's source segment (rounded out
// to whole pixels), as PIL resizing a cropped image reads only the crop.
AxisTaps axis_taps(const AxisResize& axis, int64_t extent);

// What is done to each channel's values in [0, 1] as they are written:
// v * scale + shift (normalization by mean m and deviation s is scale 1/s,
// shift -m/s). The identity by default.
struct ChannelAffine {
  std::array<float, 3> scale{1, 1, 1};
  std::array<float, 3> shift{0, 0, 0};
};

// Where a sample is written: as floats, mapped by a ChannelAffine, or as the
// nearest 8-bit values (v * 255 rounded half up, as PIL rounds), for batches
// that travel to a device as bytes and are normalized there.
struct SampleOut {
  SampleOut(float* f) : floats(f) {}  // NOLINT(google-explicit-constructor): most callers write floats
  explicit SampleOut(uint8_t* b) : bytes(b) {}
  float* floats = nullptr;
  uint8_t* bytes = nullptr;
};

// Writes the sample [channels, y.size, x.size] to `out`: window's pixels
// converted to `channels` (1: luminance 0.299 R + 0.587 G + 0.114 B, as PIL's
// convert("L"); 3: RGB, gray repeated; CMYK through RGB) in [0, 1], then
// resampled, clamped to [0, 1] and mapped by `affine`; mirrored left to
// right when `flip` (bytes are written unmapped). The window must hold
// [x.lo, x.hi) x [y.lo, y.hi).
void resample(const PixelWindow& window, const AxisTaps& x, const AxisTaps& y, int64_t channels, bool flip,
              SampleOut out, const ChannelAffine& affine = {});

}  // namespace tula::data
