// Where samples come from: RandomResizedCrop boxes in range and repeatable,
// the evaluation resize + centre crop exact, and the DCT scale chosen.
#include "data/crop_geometry.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <tuple>

#include "data/image_files.hpp"
#include "data/image_sample.hpp"
#include "data/resample.hpp"

namespace tula::data {
namespace {

using namespace testing;

TEST(RandomResizedCrop, BoxesLieInTheImageWithAreaAndRatioInRange) {
  const ImageSize image{400, 300};
  Rng rng(11);
  for (int i = 0; i < 2000; ++i) {
    const auto b = random_resized_crop(image, rng);
    ASSERT_GE(b.top, 0);
    ASSERT_GE(b.left, 0);
    ASSERT_GT(b.height, 0);
    ASSERT_GT(b.width, 0);
    ASSERT_LE(b.top + b.height, image.height);
    ASSERT_LE(b.left + b.width, image.width);
    // Rounding the sides to whole pixels moves area and ratio a little.
    const double area = static_cast<double>(b.width * b.height) / (400.0 * 300.0);
    const double ratio = static_cast<double>(b.width) / static_cast<double>(b.height);
    EXPECT_GE(area, 0.08 * 0.98) << i;
    EXPECT_LE(area, 1.0) << i;
    EXPECT_GE(ratio, 0.75 * 0.99) << i;
    EXPECT_LE(ratio, 4.0 / 3.0 * 1.01) << i;
  }
}

TEST(RandomResizedCrop, TheSameSeedGivesTheSameBoxesAndAnotherOthers) {
  const auto boxes = [](uint64_t seed) {
    Rng rng(seed);
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> out;
    for (int i = 0; i < 50; ++i) {
      const auto b = random_resized_crop({224, 160}, rng);
      out.emplace_back(b.top, b.left, b.height, b.width);
    }
    return out;
  };
  EXPECT_EQ(boxes(5), boxes(5));
  EXPECT_NE(boxes(5), boxes(6));
  const auto many = boxes(5);
  EXPECT_GT(std::set(many.begin(), many.end()).size(), 40u);  // not stuck on one box
}

TEST(RandomResizedCrop, AnImageNoDrawFitsFallsBackToTheCentre) {
  // 1000 x 10: every draw of at least 8% of the area is taller than 10 pixels.
  Rng rng(0);
  const auto b = random_resized_crop({1000, 10}, rng);
  EXPECT_EQ(b.height, 10);
  EXPECT_EQ(b.width, 13);  // round(10 * 4 / 3)
  EXPECT_EQ(b.top, 0);
  EXPECT_EQ(b.left, (1000 - 13) / 2);
}

TEST(ResizeThenCenterCrop, FollowsTorchvisionsSizesAndOffsets) {
  // 224 from 500 x 375: shorter side to 256, longer to int(256 * 500 / 375) = 341.
  const auto p = resize_then_center_crop({500, 375}, 224);
  EXPECT_EQ(p.y.resized, 256);
  EXPECT_EQ(p.x.resized, 341);
  EXPECT_EQ(p.y.offset, 16);
  EXPECT_EQ(p.x.offset, 58);  // round(58.5) is 58: half to even
  EXPECT_EQ(p.x.size, 224);
  EXPECT_DOUBLE_EQ(p.x.length, 500);
}

TEST(ResizeThenCenterCrop, AWholeCropLeavesAnImageOfTheSampleSizeAsItIs) {
  const auto p = resize_then_center_crop({28, 28}, 28, 1.0);
  EXPECT_EQ(p.x.resized, 28);
  EXPECT_EQ(p.y.resized, 28);
  EXPECT_EQ(p.x.offset, 0);
  EXPECT_EQ(p.y.offset, 0);
  EXPECT_DOUBLE_EQ(p.x.length, 28);
  // A wider image keeps its centre square whole: 40 x 28 to 40 x 28, cut to the middle 28.
  const auto wide = resize_then_center_crop({40, 28}, 28, 1.0);
  EXPECT_EQ(wide.x.resized, 40);
  EXPECT_EQ(wide.x.offset, 6);
}

// R = 5x, G = 7y, B = 100 + 2x - y: linear, so a symmetric filter over whole
// source pixels reproduces it at the filter's centre.
std::vector<uint8_t> gradient(int x, int y) {
  return {static_cast<uint8_t>(5 * x), static_cast<uint8_t>(7 * y), static_cast<uint8_t>(100 + 2 * x - y)};
}

TEST(ResizeThenCenterCrop, IsExactOnAGradient) {
  // 48 x 32 at 14: shorter side to round(16) = 16, so both axes shrink by 2;
  // the longer to 24; the crop starts at (5, 1) of the resized image.
  // Output (x, y) is centred on source (2 (x + 5) + 1, 2 (y + 1) + 1), which
  // in pixel-index terms (pixel k's centre is k + 0.5) is (2x + 10.5, 2y + 2.5).
  const TempDir dir("tula-gradient");
  PngSpec spec;
  spec.width = 48;
  spec.height = 32;
  write_png(dir.file("g.png"), spec, gradient);
  SampleSpec s;
  s.size = 14;
  std::vector<float> out(3 * 14 * 14);
  decode_sample(read_file_bytes(dir.file("g.png")), s, nullptr, out.data());
  for (int y = 0; y < 14; ++y) {
    for (int x = 0; x < 14; ++x) {
      const double sx = 2 * x + 10.5, sy = 2 * y + 2.5;
      const double expected[3] = {5 * sx, 7 * sy, 100 + 2 * sx - sy};
      for (int c = 0; c < 3; ++c) {
        ASSERT_NEAR(out[static_cast<size_t>((c * 14 + y) * 14 + x)], expected[c] / 255.0, 1e-5)
            << "channel " << c << " at " << x << "," << y;
      }
    }
  }
}

TEST(AxisTaps, EnlargingIsPlainBilinearAndKeepsToTheSegment) {
  // Columns 10..13 (4 pixels) to 8: centres at 10 + (i + 0.5) / 2.
  const auto t = axis_taps({10, 4, 8, 0, 8}, 40);
  EXPECT_EQ(t.lo, 10);
  EXPECT_EQ(t.hi, 14);
  // Output 0 is centred at 10.25, a quarter pixel left of pixel 10's centre:
  // nothing left of the segment is read, so it is pixel 10 alone.
  EXPECT_EQ(t.first[0], 10);
  EXPECT_EQ(t.count[0], 1);
  // Output 3 at 11.75: pixels 11 (centre 11.5) and 12 (12.5), 3/4 and 1/4.
  EXPECT_EQ(t.first[3], 11);
  ASSERT_EQ(t.count[3], 2);
  EXPECT_NEAR(t.weights_of(3)[0], 0.75, 1e-6);
  EXPECT_NEAR(t.weights_of(3)[1], 0.25, 1e-6);
}

TEST(DctScale, IsTheSmallestEighthThatStillCoversTheResize) {
  const ImageSize image{1000, 800};
  const auto decoded = [&](int e) {
    return ImageSize{(image.width * e + 7) / 8, (image.height * e + 7) / 8};  // libjpeg rounds up
  };
  // A 100 x 100 crop to 16: 100 / 8 = 12.5 < 16, 100 * 2 / 8 = 25 >= 16.
  EXPECT_EQ(dct_eighths(crop_then_resize({0, 0, 100, 100}, 16), image, decoded), 2);
  // The whole image to 100: 800 / 8 = 100.
  EXPECT_EQ(dct_eighths(crop_then_resize({0, 0, 800, 1000}, 100), image, decoded), 1);
  // A crop smaller than the sample: no scaling.
  EXPECT_EQ(dct_eighths(crop_then_resize({0, 0, 50, 50}, 64), image, decoded), 8);
  // 3/8 would cover a 100 x 100 crop to 32 (37.5), but only the SIMD scales are used: 4/8.
  EXPECT_EQ(dct_eighths(crop_then_resize({0, 0, 100, 100}, 32), image, decoded), 4);
  // 6/8 would do for 100 -> 70; the next SIMD scale above 4/8 is the whole decode.
  EXPECT_EQ(dct_eighths(crop_then_resize({0, 0, 100, 100}, 70), image, decoded), 8);
}

}  // namespace
}  // namespace tula::data
