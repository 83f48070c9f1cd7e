// JPEG files through libjpeg(-turbo), decoding no more than a sample needs:
// DCT scaling (1/8 .. 8/8) shrinks the image inside the inverse transform,
// much cheaper than decoding it whole and resizing, and only the rows and
// columns a crop reads are decoded.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "data/pixels.hpp"

namespace tula::data {

struct JpegState;  // libjpeg's structures, kept out of this header

class JpegDecoder {
 public:
  // Reads the header of the JPEG in `bytes`, which must outlive the decoder.
  // Throws BadImage with libjpeg's message.
  explicit JpegDecoder(const std::vector<uint8_t>& bytes);
  ~JpegDecoder();
  JpegDecoder(const JpegDecoder&) = delete;
  JpegDecoder& operator=(const JpegDecoder&) = delete;

  ImageSize size() const;
  // The image's size decoded at eighths / 8 (1..8), as libjpeg rounds it.
  ImageSize scaled_size(int eighths);
  // Decodes, at eighths / 8, rows [y0, y1) and at least columns [x0, x1)
  // (libjpeg widens them to whole blocks), once per decoder. Gray files give
  // gray pixels; colour files give RGB, or gray when `gray` asks for it
  // (libjpeg then keeps the luminance it stores and skips the colour
  // conversion); CMYK files give CMYK as stored. Throws BadImage for corrupt
  // or truncated data.
  PixelWindow decode(int eighths, int64_t x0, int64_t x1, int64_t y0, int64_t y1, bool gray);

 private:
  std::unique_ptr<JpegState> state_;
};

}  // namespace tula::data
