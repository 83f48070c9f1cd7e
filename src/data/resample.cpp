#include "data/resample.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace tula::data {
namespace {

constexpr float kScale = 1.0f / 255.0f;

// Pixel p of the window in `channels` floats in [0, 1].
void convert_pixel(const uint8_t* p, PixelKind kind, int64_t channels, float* out) {
  float r = 0, g = 0, b = 0;
  switch (kind) {
    case PixelKind::kGray:
      r = g = b = static_cast<float>(p[0]) * kScale;
      if (channels == 1) {
        out[0] = r;
        return;
      }
      break;
    case PixelKind::kRgb:
      r = static_cast<float>(p[0]) * kScale;
      g = static_cast<float>(p[1]) * kScale;
      b = static_cast<float>(p[2]) * kScale;
      break;
    case PixelKind::kCmyk:
    case PixelKind::kInvertedCmyk: {
      // PIL's CMYK -> RGB: R = (1 - C)(1 - K), and so on.
      const bool inverted = kind == PixelKind::kInvertedCmyk;
      float ink[4];
      for (int i = 0; i < 4; ++i) ink[i] = static_cast<float>(inverted ? 255 - p[i] : p[i]) * kScale;
      r = (1 - ink[0]) * (1 - ink[3]);
      g = (1 - ink[1]) * (1 - ink[3]);
      b = (1 - ink[2]) * (1 - ink[3]);
      break;
    }
  }
  if (channels == 1) {
    out[0] = 0.299f * r + 0.587f * g + 0.114f * b;
  } else {
    out[0] = r;
    out[1] = g;
    out[2] = b;
  }
}

}  // namespace

AxisTaps axis_taps(const AxisResize& a, int64_t extent) {
  if (a.resized <= 0 || a.size <= 0 || a.offset < 0 || a.offset + a.size > a.resized || !(a.length > 0)) {
    throw std::invalid_argument(fmt::format("resample: bad plan (segment {:f}+{:f} -> {}, keeping {}+{})", a.start,
                                            a.length, a.resized, a.offset, a.size));
  }
  const double scale = a.length / static_cast<double>(a.resized);
  const double filter_scale = std::max(scale, 1.0);
  const double support = filter_scale;  // the triangle's radius, 1 source pixel when enlarging
  const int64_t seg_lo = std::clamp<int64_t>(static_cast<int64_t>(std::floor(a.start)), 0, extent - 1);
  const int64_t seg_hi =
      std::clamp<int64_t>(static_cast<int64_t>(std::ceil(a.start + a.length - 1e-9)), seg_lo + 1, extent);

  AxisTaps t;
  t.stride = static_cast<int64_t>(std::ceil(support)) * 2 + 1;
  t.first.resize(static_cast<size_t>(a.size));
  t.count.resize(static_cast<size_t>(a.size));
  t.weights.assign(static_cast<size_t>(a.size * t.stride), 0.0f);
  t.lo = seg_hi;
  t.hi = seg_lo;
  std::vector<double> weights(static_cast<size_t>(t.stride));
  for (int64_t i = 0; i < a.size; ++i) {
    // Pixel k covers [k, k + 1); its centre is k + 0.5 (PIL's convention,
    // and torch's align_corners=False).
    const double center = a.start + (static_cast<double>(a.offset + i) + 0.5) * scale;
    const int64_t lo = std::max(seg_lo, static_cast<int64_t>(std::floor(center - support + 0.5)));
    const int64_t hi = std::min(seg_hi, static_cast<int64_t>(std::floor(center + support + 0.5)));
    double total = 0;
    const int64_t n = std::min<int64_t>(std::max<int64_t>(hi - lo, 0), t.stride);
    for (int64_t k = 0; k < n; ++k) {
      const double d = std::abs((static_cast<double>(lo + k) + 0.5 - center) / filter_scale);
      weights[static_cast<size_t>(k)] = d < 1 ? 1 - d : 0;
      total += weights[static_cast<size_t>(k)];
    }
    int64_t first = lo, count = n;
    if (!(total > 0)) {
      // The centre fell at the segment's edge with no pixel in reach: take
      // the nearest pixel.
      first = std::clamp<int64_t>(static_cast<int64_t>(std::floor(center)), seg_lo, seg_hi - 1);
      count = 1;
      weights[0] = total = 1;
    }
    t.first[static_cast<size_t>(i)] = first;
    t.count[static_cast<size_t>(i)] = count;
    float* w = t.weights.data() + i * t.stride;
    for (int64_t k = 0; k < count; ++k) w[k] = static_cast<float>(weights[static_cast<size_t>(k)] / total);
    t.lo = std::min(t.lo, first);
    t.hi = std::max(t.hi, first + count);
  }
  return t;
}

namespace {

// Row `src` of the window, `n` pixels, as `channels` interleaved floats in
// [0, 1]: one switch per row, so the loops below are plain arithmetic.
__attribute__((optimize("tree-vectorize"))) void bytes_to_unit(const uint8_t* __restrict src, float* __restrict out,
                                                                int64_t n) {
  for (int64_t k = 0; k < n; ++k) out[k] = static_cast<float>(src[k]) * kScale;
}

void convert_row(const uint8_t* src, PixelKind kind, int64_t n, int64_t channels, float* out) {
  if (kind == PixelKind::kRgb && channels == 3) {
    bytes_to_unit(src, out, 3 * n);
  } else if (kind == PixelKind::kGray && channels == 1) {
    bytes_to_unit(src, out, n);
  } else {
    const int64_t bpp = bytes_per_pixel(kind);
    for (int64_t k = 0; k < n; ++k) convert_pixel(src + k * bpp, kind, channels, out + k * channels);
  }
}

// Buffers of the two passes, kept by each decoding thread from one image to
// the next rather than allocated (and page-faulted in) for every image.
std::vector<float>& scratch(int which) {
  thread_local std::vector<float> buffers[3];
  return buffers[which];
}

float* sized(int which, size_t n) {
  auto& b = scratch(which);
  if (b.size() < n) b.resize(n);
  return b.data();
}

// The loops below run over contiguous floats that do not overlap; GCC's -O2
// leaves them scalar, so they are vectorized explicitly (as in
// kernels/momentum_update.cpp).
__attribute__((optimize("tree-vectorize"))) void set_scaled(float* __restrict out, const float* __restrict in,
                                                             float w, int64_t n) {
  for (int64_t f = 0; f < n; ++f) out[f] = w * in[f];
}

__attribute__((optimize("tree-vectorize"))) void add_scaled(float* __restrict out, const float* __restrict in,
                                                             float w, int64_t n) {
  for (int64_t f = 0; f < n; ++f) out[f] += w * in[f];
}

__attribute__((optimize("tree-vectorize"))) void affine_into(float* __restrict out, const float* __restrict in,
                                                              float scale, float shift, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] * scale + shift;
}

void affine_mirrored(float* out, const float* in, float scale, float shift, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[n - 1 - i] = in[i] * scale + shift;
}

// v in [0, 1] (but for rounding) to the nearest byte.
uint8_t to_byte(float v) { return static_cast<uint8_t>(std::clamp(v * 255.0f + 0.5f, 0.0f, 255.0f)); }

void bytes_into(uint8_t* out, const float* in, int64_t n, bool flip) {
  for (int64_t i = 0; i < n; ++i) out[flip ? n - 1 - i : i] = to_byte(in[i]);
}

// One output row of one channel, from `in` (out_w floats) into its plane.
void write_row(const SampleOut& out, int64_t offset, const float* in, int64_t n, bool flip, float scale,
               float shift) {
  if (out.bytes != nullptr) {
    bytes_into(out.bytes + offset, in, n, flip);
  } else if (flip) {
    affine_mirrored(out.floats + offset, in, scale, shift, n);
  } else {
    affine_into(out.floats + offset, in, scale, shift, n);
  }
}

}  // namespace

void resample(const PixelWindow& window, const AxisTaps& x, const AxisTaps& y, int64_t channels, bool flip,
              SampleOut out, const ChannelAffine& affine) {
  if (x.lo < window.x || x.hi > window.x + window.width || y.lo < window.y || y.hi > window.y + window.height) {
    throw std::logic_error("resample: the decoded window does not hold the pixels the filter reads");
  }
  const auto out_w = static_cast<int64_t>(x.first.size());
  const auto out_h = static_cast<int64_t>(y.first.size());
  const int64_t bpp = bytes_per_pixel(window.kind);
  // Horizontal pass over the rows the vertical pass reads: [y.lo, y.hi), each
  // row held as `channels` planes of out_w, so the vertical pass and the
  // final write run over contiguous floats.
  const int64_t rows = y.hi - y.lo;
  const int64_t in_w = x.hi - x.lo;
  const int64_t row_floats = out_w * channels;
  float* line = sized(0, static_cast<size_t>(in_w * channels));
  float* across = sized(1, static_cast<size_t>(rows * row_floats));
  for (int64_t r = 0; r < rows; ++r) {
    convert_row(window.row(y.lo + r) + (x.lo - window.x) * bpp, window.kind, in_w, channels, line);
    float* dst = across + r * row_floats;
    for (int64_t i = 0; i < out_w; ++i) {
      const float* w = x.weights_of(i);
      const int64_t taps = x.count[static_cast<size_t>(i)];
      const float* p = line + (x.first[static_cast<size_t>(i)] - x.lo) * channels;
      if (channels == 3) {
        float r0 = 0, g0 = 0, b0 = 0;
        for (int64_t k = 0; k < taps; ++k) {
          r0 += w[k] * p[3 * k];
          g0 += w[k] * p[3 * k + 1];
          b0 += w[k] * p[3 * k + 2];
        }
        dst[i] = r0;
        dst[out_w + i] = g0;
        dst[2 * out_w + i] = b0;
      } else {
        for (int64_t c = 0; c < channels; ++c) {
          float sum = 0;
          for (int64_t k = 0; k < taps; ++k) sum += w[k] * p[k * channels + c];
          dst[c * out_w + i] = sum;
        }
      }
    }
  }
  // Vertical pass: each output row a weighted sum of whole rows, then each
  // channel written to its plane, mirrored when flipped, mapped by `affine`.
  // No clamp is needed: the weights are non-negative and sum to 1, so a
  // value stays within its inputs' range, [0, 1], but for rounding.
  float* row = sized(2, static_cast<size_t>(row_floats));
  for (int64_t j = 0; j < out_h; ++j) {
    const float* w = y.weights_of(j);
    const float* base = across + (y.first[static_cast<size_t>(j)] - y.lo) * row_floats;
    const int64_t taps = y.count[static_cast<size_t>(j)];
    set_scaled(row, base, w[0], row_floats);
    for (int64_t k = 1; k < taps; ++k) add_scaled(row, base + k * row_floats, w[k], row_floats);
    for (int64_t c = 0; c < channels; ++c) {
      write_row(out, (c * out_h + j) * out_w, row + c * out_w, out_w, flip, affine.scale[static_cast<size_t>(c)],
                affine.shift[static_cast<size_t>(c)]);
    }
  }
}

}  // namespace tula::data
