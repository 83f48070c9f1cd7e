#include "data/pixels.hpp"

namespace tula::data {

int64_t bytes_per_pixel(PixelKind kind) {
  switch (kind) {
    case PixelKind::kGray:
      return 1;
    case PixelKind::kRgb:
      return 3;
    case PixelKind::kCmyk:
    case PixelKind::kInvertedCmyk:
      return 4;
  }
  return 4;
}

}  // namespace tula::data
