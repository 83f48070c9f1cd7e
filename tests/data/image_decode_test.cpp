// Decoding JPEG and PNG files into samples: every colour layout the
// decoders accept gives the pixel values it holds (within JPEG's loss), the
// DCT-scaled decode matches a full one, and corrupt files fail cleanly.
#include <gtest/gtest.h>

#include <cmath>

#include "data/image_files.hpp"
#include "data/image_sample.hpp"
#include "data/jpeg_decoder.hpp"
#include "data/png_decoder.hpp"

namespace tula::data {
namespace {

using namespace testing;

// A flat colour survives JPEG at quality 95 within this (in [0, 1] units).
constexpr float kJpegTolerance = 3.0f / 255.0f;

std::vector<float> sample_of(const Bytes& bytes, int64_t channels, int64_t size = 16, bool dct_scaling = true,
                             SampleInfo* info = nullptr) {
  SampleSpec spec;
  spec.size = size;
  spec.channels = channels;
  spec.dct_scaling = dct_scaling;
  std::vector<float> out(static_cast<size_t>(channels * size * size));
  const auto got = decode_sample(bytes, spec, nullptr, out.data());
  if (info != nullptr) *info = got;
  return out;
}

Bytes file_bytes(const TempDir& dir, const std::function<void(const std::string&)>& write) {
  const auto path = dir.file("image");
  write(path);
  return read_file_bytes(path);
}

// Every pixel of channel c of `sample` is within `tolerance` of expected[c].
void expect_flat(const std::vector<float>& sample, const std::vector<double>& expected, float tolerance) {
  const size_t plane = sample.size() / expected.size();
  for (size_t c = 0; c < expected.size(); ++c) {
    for (size_t i = 0; i < plane; ++i) {
      ASSERT_NEAR(sample[c * plane + i], expected[c], tolerance) << "channel " << c << " pixel " << i;
    }
  }
}

double luminance(double r, double g, double b) { return (0.299 * r + 0.587 * g + 0.114 * b) / 255.0; }

TEST(DecodeJpeg, RgbGivesItsColourAndItsLuminance) {
  const auto bytes = jpeg_bytes({}, flat({200, 120, 40}));
  expect_flat(sample_of(bytes, 3), {200 / 255.0, 120 / 255.0, 40 / 255.0}, kJpegTolerance);
  expect_flat(sample_of(bytes, 1), {luminance(200, 120, 40)}, kJpegTolerance);
}

TEST(DecodeJpeg, GrayIsRepeatedOverThreeChannels) {
  JpegSpec spec;
  spec.space = JCS_GRAYSCALE;
  const auto bytes = jpeg_bytes(spec, flat({77}));
  expect_flat(sample_of(bytes, 3), {77 / 255.0, 77 / 255.0, 77 / 255.0}, kJpegTolerance);
  expect_flat(sample_of(bytes, 1), {77 / 255.0}, kJpegTolerance);
}

TEST(DecodeJpeg, AdobeCmykIsReadInvertedAndPlainCmykAsInk) {
  // Ink C = 0.2, M = 0.6, Y = 0, K = 0.1: R = 0.8 * 0.9, G = 0.4 * 0.9, B = 0.9.
  const std::vector<double> rgb = {0.8 * 0.9, 0.4 * 0.9, 0.9};
  const std::vector<uint8_t> ink = {51, 153, 0, 25};
  JpegSpec spec;
  spec.space = JCS_CMYK;
  spec.adobe_marker = true;  // stored as Adobe writes it: 255 - ink
  const auto adobe = jpeg_bytes(spec, flat({204, 102, 255, 230}));
  expect_flat(sample_of(adobe, 3), rgb, kJpegTolerance + 0.01f);
  spec.adobe_marker = false;
  const auto plain = jpeg_bytes(spec, flat(ink));
  expect_flat(sample_of(plain, 3), rgb, kJpegTolerance + 0.01f);
  expect_flat(sample_of(plain, 1), {luminance(rgb[0] * 255, rgb[1] * 255, rgb[2] * 255)}, kJpegTolerance + 0.01f);
}

TEST(DecodePng, PaletteWithTransparencyGivesThePaletteColours) {
  PngSpec spec;
  spec.format = PNG_FORMAT_RGBA_COLORMAP;
  spec.colormap = {10, 20, 30, 255, 250, 128, 5, 0};  // entry 1 fully transparent: its colour stays
  const TempDir dir("tula-png");
  const auto bytes = file_bytes(dir, [&](const std::string& p) {
    write_png(p, spec, [](int x, int) { return std::vector<uint8_t>{static_cast<uint8_t>(x < 20 ? 0 : 1)}; });
  });
  const auto window = decode_png(bytes);
  ASSERT_EQ(window.kind, PixelKind::kRgb);
  ASSERT_EQ(window.width, 40);
  const uint8_t* row = window.row(7);
  EXPECT_EQ((std::vector<int>{row[0], row[1], row[2]}), (std::vector<int>{10, 20, 30}));
  EXPECT_EQ((std::vector<int>{row[3 * 39], row[3 * 39 + 1], row[3 * 39 + 2]}), (std::vector<int>{250, 128, 5}));
}

TEST(DecodePng, AlphaIsDroppedNotComposited) {
  PngSpec spec;
  spec.format = PNG_FORMAT_RGBA;
  const TempDir dir("tula-png");
  const auto rgba = file_bytes(dir, [&](const std::string& p) { write_png(p, spec, flat({90, 180, 45, 0})); });
  expect_flat(sample_of(rgba, 3), {90 / 255.0, 180 / 255.0, 45 / 255.0}, 1e-6f);
  spec.format = PNG_FORMAT_GA;
  const auto ga = file_bytes(dir, [&](const std::string& p) { write_png(p, spec, flat({140, 10})); });
  expect_flat(sample_of(ga, 3), {140 / 255.0, 140 / 255.0, 140 / 255.0}, 1e-6f);
  expect_flat(sample_of(ga, 1), {140 / 255.0}, 1e-6f);
}

TEST(DecodePng, SixteenBitSamplesAreScaledToEightBits) {
  PngSpec spec;
  spec.format = PNG_FORMAT_LINEAR_RGB;
  const TempDir dir("tula-png");
  // 0x8080 -> 128, 0xFFFF -> 255, 0x0101 -> 1: round(v * 255 / 65535).
  const auto bytes = file_bytes(dir, [&](const std::string& p) { write_png(p, spec, flat({0x80, 0x80, 0xFF, 0xFF, 0x01, 0x01})); });
  expect_flat(sample_of(bytes, 3), {128 / 255.0, 255 / 255.0, 1 / 255.0}, 1e-6f);
}

TEST(DecodePng, RgbGivesItsLuminanceAsPilDoes) {
  PngSpec spec;
  const TempDir dir("tula-png");
  const auto bytes = file_bytes(dir, [&](const std::string& p) { write_png(p, spec, flat({200, 120, 40})); });
  expect_flat(sample_of(bytes, 1), {luminance(200, 120, 40)}, 1e-6f);
}

// A smooth picture, so a decode at 1/8 scale differs from the full one only by
// the filtering.
std::vector<uint8_t> smooth(int x, int y) {
  return {static_cast<uint8_t>(40 + x / 2), static_cast<uint8_t>(30 + y / 2),
          static_cast<uint8_t>(128 + 60 * std::sin(x / 40.0) * std::cos(y / 50.0))};
}

TEST(DecodeJpeg, ABigImageForASmallSampleDecodesScaledAndMatchesTheFullDecode) {
  JpegSpec spec;
  spec.width = 320;
  spec.height = 240;
  const auto bytes = jpeg_bytes(spec, smooth);
  SampleInfo scaled, full;
  const auto fast = sample_of(bytes, 3, 16, true, &scaled);
  const auto slow = sample_of(bytes, 3, 16, false, &full);
  // Shorter side to round(16 * 8 / 7) = 18: 240 / 8 = 30 >= 18, so 1/8 does.
  EXPECT_EQ(scaled.eighths, 1);
  EXPECT_EQ(full.eighths, 8);
  EXPECT_EQ(scaled.image.width, 320);
  float worst = 0;
  for (size_t i = 0; i < fast.size(); ++i) worst = std::max(worst, std::abs(fast[i] - slow[i]));
  EXPECT_LT(worst, 0.02f);
}

TEST(DecodeJpeg, TheScaleIsTheSmallestThatStillCoversTheSample) {
  JpegSpec spec;
  spec.width = 320;
  spec.height = 240;
  const auto bytes = jpeg_bytes(spec, smooth);
  SampleInfo info;
  sample_of(bytes, 3, 64, true, &info);  // shorter side to 73: 240 * 2 / 8 = 60 < 73 <= 240 * 4 / 8 = 120
  EXPECT_EQ(info.eighths, 4) << "3/8 would cover it too, but only the SIMD scales 1/8, 1/4, 1/2 are used";
  sample_of(bytes, 3, 48, true, &info);  // shorter side to 55: 240 * 2 / 8 = 60 >= 55
  EXPECT_EQ(info.eighths, 2);
  sample_of(bytes, 3, 224, true, &info);  // 256 > 240: the whole image
  EXPECT_EQ(info.eighths, 8);
}

TEST(DecodeJpeg, AWindowDecodesOnlyTheRowsAndWholeBlocksOfColumnsAsked) {
  JpegSpec spec;
  spec.width = 320;
  spec.height = 240;
  const auto bytes = jpeg_bytes(spec, smooth);
  JpegDecoder decoder(bytes);
  const auto w = decoder.decode(8, 100, 150, 60, 90, false);
  EXPECT_EQ(w.y, 60);
  EXPECT_EQ(w.height, 30);
  EXPECT_LE(w.x, 100);
  EXPECT_GE(w.x + w.width, 150);
  EXPECT_LT(w.width, 320);
  // The window's pixels are the image's: compare with a whole decode.
  JpegDecoder whole_decoder(bytes);
  const auto whole = whole_decoder.decode(8, 0, 320, 0, 240, false);
  for (int64_t y = 60; y < 90; ++y) {
    for (int64_t x = 100; x < 150; ++x) {
      for (int c = 0; c < 3; ++c) {
        ASSERT_EQ(w.row(y)[(x - w.x) * 3 + c], whole.row(y)[x * 3 + c]) << x << "," << y;
      }
    }
  }
}

TEST(DecodeJpeg, TrainingCropsDecodedScaledAndWindowedMatchTheSameCropsOfALosslessCopy) {
  // The same smooth picture as JPEG and PNG; the same seed draws the same
  // crop from both. The PNG is decoded whole; the JPEG only over the crop's
  // rows and block columns, at a reduced scale where the crop allows.
  JpegSpec jspec;
  jspec.width = 320;
  jspec.height = 240;
  const auto jpeg = jpeg_bytes(jspec, smooth);
  PngSpec pspec;
  pspec.width = 320;
  pspec.height = 240;
  const TempDir dir("tula-png");
  const auto png = file_bytes(dir, [&](const std::string& p) { write_png(p, pspec, smooth); });
  SampleSpec spec;
  spec.size = 32;
  spec.augment = true;
  std::vector<float> a(3 * 32 * 32), b(3 * 32 * 32);
  int scaled = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng ra(seed), rb(seed);
    scaled += decode_sample(jpeg, spec, &ra, a.data()).eighths < 8 ? 1 : 0;
    decode_sample(png, spec, &rb, b.data());
    float worst = 0;
    for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
    EXPECT_LT(worst, 0.03f) << "seed " << seed;
  }
  EXPECT_GT(scaled, 0);  // most crops of 320 x 240 are over twice 32 pixels wide
}

// Corrupt files throw BadImage from whichever libjpeg or libpng phase meets
// the damage, and the process goes on: the longjmp lands in the phase, and
// the decoder's destructor still frees libjpeg's memory (run under a
// sanitizer to see leaks).
TEST(DecodeErrors, CorruptAndTruncatedFilesThrowBadImage) {
  JpegSpec spec;
  spec.width = 320;
  spec.height = 240;
  const auto good_jpeg = jpeg_bytes(spec, smooth);
  const Bytes half_jpeg(good_jpeg.begin(), good_jpeg.begin() + static_cast<long>(good_jpeg.size() / 2));
  const Bytes header_only(good_jpeg.begin(), good_jpeg.begin() + 40);
  const Bytes bad_marker = {0xFF, 0xD8, 0xFF, 0x01, 0x02, 0x03, 0x04};
  const TempDir dir("tula-png");
  const auto good_png = file_bytes(dir, [&](const std::string& p) { write_png(p, PngSpec{}, smooth); });
  const Bytes half_png(good_png.begin(), good_png.begin() + static_cast<long>(good_png.size() / 2));
  Bytes bad_crc = good_png;
  bad_crc[20] ^= 0x55;  // inside IHDR
  const std::vector<std::pair<std::string, Bytes>> cases = {
      {"truncated JPEG", half_jpeg},    {"JPEG cut in its header", header_only}, {"JPEG with a bad marker", bad_marker},
      {"truncated PNG", half_png},      {"PNG with a bad CRC", bad_crc},         {"text", Bytes{'h', 'i', '\n'}},
      {"empty file", Bytes{}}};
  for (int round = 0; round < 3; ++round) {
    for (const auto& [what, bytes] : cases) {
      for (const bool dct : {true, false}) {
        EXPECT_THROW(sample_of(bytes, 3, 16, dct), BadImage) << what;
      }
    }
  }
  EXPECT_NO_THROW(sample_of(good_jpeg, 3));
  EXPECT_NO_THROW(sample_of(good_png, 3));
}

}  // namespace
}  // namespace tula::data
