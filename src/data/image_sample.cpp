#include "data/image_sample.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "data/crop_geometry.hpp"
#include "data/jpeg_decoder.hpp"
#include "data/png_decoder.hpp"
#include "data/resample.hpp"

namespace tula::data {
namespace {

bool is_jpeg(const std::vector<uint8_t>& b) { return b.size() >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF; }

bool is_png(const std::vector<uint8_t>& b) {
  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  return b.size() >= 8 && std::equal(signature, signature + 8, b.begin());
}

struct Cut {
  ResizePlan plan;
  bool flip = false;
};

Cut choose_cut(ImageSize image, const SampleSpec& spec, Rng* rng) {
  if (image.width <= 0 || image.height <= 0) throw BadImage("image of size 0");
  Cut cut;
  if (!spec.augment) {
    cut.plan = resize_then_center_crop(image, spec.size, spec.eval_crop);
    return cut;
  }
  if (rng == nullptr) throw std::invalid_argument("decode_sample: augmenting needs a random number generator");
  // Crop first, then the flip: the order of torchvision's recipe.
  cut.plan = crop_then_resize(random_resized_crop(image, *rng), spec.size);
  cut.flip = (rng->next() >> 63) != 0;
  return cut;
}

SampleInfo decode_jpeg_sample(const std::vector<uint8_t>& bytes, const SampleSpec& spec, Rng* rng, SampleOut out) {
  JpegDecoder decoder(bytes);
  SampleInfo info;
  info.image = decoder.size();
  const Cut cut = choose_cut(info.image, spec, rng);
  info.eighths = spec.dct_scaling ? dct_eighths(cut.plan, info.image, [&](int e) { return decoder.scaled_size(e); }) : 8;
  const ImageSize decoded = decoder.scaled_size(info.eighths);
  const ResizePlan plan = rescale(cut.plan, info.image, decoded);
  const AxisTaps x = axis_taps(plan.x, decoded.width);
  const AxisTaps y = axis_taps(plan.y, decoded.height);
  const PixelWindow window = decoder.decode(info.eighths, x.lo, x.hi, y.lo, y.hi, spec.channels == 1);
  resample(window, x, y, spec.channels, cut.flip, out, spec.affine);
  return info;
}

SampleInfo decode_png_sample(const std::vector<uint8_t>& bytes, const SampleSpec& spec, Rng* rng, SampleOut out) {
  const PixelWindow window = decode_png(bytes);
  SampleInfo info;
  info.image = {window.width, window.height};
  const Cut cut = choose_cut(info.image, spec, rng);
  resample(window, axis_taps(cut.plan.x, window.width), axis_taps(cut.plan.y, window.height), spec.channels,
           cut.flip, out, spec.affine);
  return info;
}

}  // namespace

PixelWindow decode_for_cache(const std::vector<uint8_t>& bytes, int64_t min_side, bool gray) {
  if (is_png(bytes)) return decode_png(bytes);
  if (!is_jpeg(bytes)) {
    if (bytes.empty()) throw BadImage("empty file");
    throw BadImage("neither a JPEG nor a PNG file (by its first bytes)");
  }
  JpegDecoder decoder(bytes);
  const ImageSize full = decoder.size();
  const int64_t wanted = std::min(min_side, std::min(full.width, full.height));
  int eighths = 8;
  for (const int e : {1, 2, 4}) {
    const ImageSize d = decoder.scaled_size(e);
    if (std::min(d.width, d.height) >= wanted) {
      eighths = e;
      break;
    }
  }
  const ImageSize d = decoder.scaled_size(eighths);
  return decoder.decode(eighths, 0, d.width, 0, d.height, gray);
}

SampleInfo sample_from_pixels(const PixelWindow& image, const SampleSpec& spec, Rng* rng, SampleOut out) {
  SampleInfo info;
  info.image = {image.width, image.height};
  const Cut cut = choose_cut(info.image, spec, rng);
  resample(image, axis_taps(cut.plan.x, image.width), axis_taps(cut.plan.y, image.height), spec.channels, cut.flip,
           out, spec.affine);
  return info;
}

SampleInfo decode_sample(const std::vector<uint8_t>& bytes, const SampleSpec& spec, Rng* rng, SampleOut out) {
  if (spec.size <= 0) throw std::invalid_argument("decode_sample: size must be positive");
  if (spec.channels != 1 && spec.channels != 3) {
    throw std::invalid_argument(fmt::format("decode_sample: channels must be 1 or 3, got {}", spec.channels));
  }
  if (is_jpeg(bytes)) return decode_jpeg_sample(bytes, spec, rng, out);
  if (is_png(bytes)) return decode_png_sample(bytes, spec, rng, out);
  if (bytes.empty()) throw BadImage("empty file");
  throw BadImage("neither a JPEG nor a PNG file (by its first bytes)");
}

}  // namespace tula::data
