// libpng reports errors through a function that must not return; as with
// libjpeg (see jpeg_decoder.cpp), each libpng call sits in a C-style phase
// that calls setjmp first and holds no object with a destructor, and the
// error function longjmps back into it over libpng's C frames only.
#include "data/png_decoder.hpp"

#include <fmt/format.h>
#include <png.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>

namespace tula::data {
namespace {

struct PngState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t position = 0;
  char message[256] = {};

  ~PngState() {
    if (png != nullptr) png_destroy_read_struct(&png, info != nullptr ? &info : nullptr, nullptr);
  }
};

void fail(png_structp png, png_const_charp message) {
  auto* s = static_cast<PngState*>(png_get_error_ptr(png));
  std::snprintf(s->message, sizeof s->message, "%s", message);
  png_longjmp(png, 1);
}

// Warnings (an sRGB profile libpng finds wrong, an unknown chunk) do not stop
// the decode, as in PIL; nothing is printed.
void ignore_warning(png_structp, png_const_charp) {}

void read_bytes(png_structp png, png_bytep out, size_t count) {
  auto* s = static_cast<PngState*>(png_get_io_ptr(png));
  if (count > s->size - s->position) png_error(png, "truncated file");
  std::memcpy(out, s->data + s->position, count);
  s->position += count;
}

// Phases: each returns false with PngState::message set if libpng failed.

bool read_info_phase(PngState* s) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_set_read_fn(s->png, s, read_bytes);
  png_read_info(s->png, s->info);
  const int color = png_get_color_type(s->png, s->info);
  const int depth = png_get_bit_depth(s->png, s->info);
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(s->png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(s->png);
  if (depth == 16) png_set_scale_16(s->png);  // rounds v * 255 / 65535
  png_set_interlace_handling(s->png);
  png_read_update_info(s->png, s->info);
  return true;
}

bool read_image_phase(PngState* s, png_bytepp rows) {
  if (setjmp(png_jmpbuf(s->png))) return false;
  png_read_image(s->png, rows);
  return true;
}

}  // namespace

PixelWindow decode_png(const std::vector<uint8_t>& bytes) {
  PngState s;
  s.data = bytes.data();
  s.size = bytes.size();
  s.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &s, fail, ignore_warning);
  if (s.png == nullptr) throw std::runtime_error("libpng: cannot create a read struct");
  s.info = png_create_info_struct(s.png);
  if (s.info == nullptr) throw std::runtime_error("libpng: cannot create an info struct");
  if (!read_info_phase(&s)) throw BadImage(s.message);

  const int64_t width = png_get_image_width(s.png, s.info);
  const int64_t height = png_get_image_height(s.png, s.info);
  if (width * height > kMaxImagePixels) {
    throw BadImage(fmt::format("PNG of {}x{} pixels, more than the {} decoded", width, height, kMaxImagePixels));
  }
  // After the expansions: 1 gray, 2 gray + alpha, 3 RGB, 4 RGBA (a palette
  // with transparency expands to RGBA), 8 bits each.
  const int channels = png_get_channels(s.png, s.info);
  const size_t row_bytes = png_get_rowbytes(s.png, s.info);
  if (channels < 1 || channels > 4 || row_bytes != static_cast<size_t>(width * channels)) {
    throw BadImage(fmt::format("PNG with {} channels in {}-byte rows, not 8-bit samples", channels, row_bytes));
  }
  std::vector<uint8_t> raw(row_bytes * static_cast<size_t>(height));
  std::vector<png_bytep> rows(static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) rows[static_cast<size_t>(y)] = raw.data() + static_cast<size_t>(y) * row_bytes;
  if (!read_image_phase(&s, rows.data())) throw BadImage(s.message);

  PixelWindow w;
  w.width = width;
  w.height = height;
  const bool gray = channels <= 2;
  w.kind = gray ? PixelKind::kGray : PixelKind::kRgb;
  const int kept = gray ? 1 : 3;
  if (kept == channels) {
    w.data = std::move(raw);
    return w;
  }
  // Drop the alpha channel.
  w.data.resize(static_cast<size_t>(width * height * kept));
  for (int64_t p = 0; p < width * height; ++p) {
    std::memcpy(&w.data[static_cast<size_t>(p * kept)], &raw[static_cast<size_t>(p * channels)],
                static_cast<size_t>(kept));
  }
  return w;
}

}  // namespace tula::data
