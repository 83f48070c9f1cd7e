// One sample of the image folder data set, from its file's bytes to a float
// image: the size and crop worked out from the header, then the decoder
// asked for just that (see crop_geometry.hpp, jpeg_decoder.hpp), then the
// resampler.
#pragma once
#include <cstdint>
#include <vector>

#include "data/pixels.hpp"
#include "data/resample.hpp"
#include "data/rng.hpp"

namespace tula::data {

struct SampleSpec {
  int64_t size = 224;    // S: the sample is [channels, S, S]
  int64_t channels = 3;  // 1 or 3
  // Training: RandomResizedCrop and a horizontal flip with probability 1/2,
  // drawn from the Rng given. Else Resize + CenterCrop, no randomness.
  bool augment = false;
  // Without augmenting: the share of the resized image's shorter side the
  // centre crop keeps (7/8, ImageNet's; 1 keeps it whole).
  double eval_crop = 0.875;
  // Applied to the values as they are written (normalization folded into
  // the decode: the batch is not read again for it).
  ChannelAffine affine;
  // Let JPEGs decode at a reduced DCT scale where the sample needs no more.
  bool dct_scaling = true;
};

// What the decode did, for tests and diagnostics.
struct SampleInfo {
  ImageSize image;  // the file's size
  int eighths = 8;  // the JPEG's DCT scale (8 for PNG)
};

// Writes the sample to out[channels * S * S] (floats, or bytes: see SampleOut). `rng` may be null when
// !spec.augment. Throws BadImage for a file that is not a decodable JPEG or
// PNG (the format is told by its first bytes, not the file's name).
// An image decoded whole for a cache of decoded images: a JPEG at the
// smallest of the fast DCT scales (1/8, 1/4, 1/2) whose shorter side still
// has `min_side` pixels (or at full size), a PNG as it is. `gray`: one
// luminance channel (a JPEG decodes straight to it).
PixelWindow decode_for_cache(const std::vector<uint8_t>& bytes, int64_t min_side, bool gray);

// decode_sample on an image already decoded (decode_for_cache's).
SampleInfo sample_from_pixels(const PixelWindow& image, const SampleSpec& spec, Rng* rng, SampleOut out);

SampleInfo decode_sample(const std::vector<uint8_t>& bytes, const SampleSpec& spec, Rng* rng, SampleOut out);

}  // namespace tula::data
