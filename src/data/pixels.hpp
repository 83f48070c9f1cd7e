// Decoded 8-bit pixels, as the JPEG and PNG decoders hand them to the
// resampler, and the error both throw for a file that is not a decodable image.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace tula::data {

// What the bytes of one pixel mean.
enum class PixelKind {
  kGray,          // 1 byte: luminance
  kRgb,           // 3 bytes
  kCmyk,          // 4 bytes, ink amounts (0: none)
  kInvertedCmyk,  // 4 bytes, 255 minus the ink, as Adobe applications write CMYK JPEGs
};

int64_t bytes_per_pixel(PixelKind kind);

struct ImageSize {
  int64_t width = 0;
  int64_t height = 0;
};

// A rectangle of a decoded image: `height` rows of `width` pixels, each
// bytes_per_pixel(kind) bytes, starting at (x, y) of that image.
struct PixelWindow {
  int64_t x = 0;
  int64_t y = 0;
  int64_t width = 0;
  int64_t height = 0;
  PixelKind kind = PixelKind::kRgb;
  std::vector<uint8_t> data;

  const uint8_t* row(int64_t image_y) const {
    return data.data() + (image_y - y) * width * bytes_per_pixel(kind);
  }
};

// A file that is not an image the decoders read: truncated, corrupt, another
// format, too large. The message says why, without the path (the caller adds it).
class BadImage : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The largest image decoded, in pixels: PIL's limit against decompression
// bombs (2 x 89,478,485), so a crafted header cannot claim gigabytes.
constexpr int64_t kMaxImagePixels = 178956970;

}  // namespace tula::data
