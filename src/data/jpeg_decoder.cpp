// libjpeg reports errors by calling error_exit, which must not return. It is
// C: a C++ exception thrown through its frames is undefined behaviour, and a
// longjmp over C++ frames skips their destructors. So every libjpeg call sits
// in a small C-style function below (a "phase") that calls setjmp first,
// holds no object with a destructor, and reports failure by returning false;
// error_exit longjmps back into the phase that is running, over libjpeg's C
// frames only. The C++ code around the phases throws.
#include "data/jpeg_decoder.hpp"

#include <csetjmp>
#include <cstdio>
#include <string>

#include <fmt/format.h>

// clang-format off: jpeglib.h needs FILE and size_t before it.
#include <jpeglib.h>
#include <jerror.h>
// clang-format on

namespace tula::data {

struct JpegState {
  jpeg_decompress_struct info{};
  jpeg_error_mgr errors{};
  std::jmp_buf jump{};
  char message[JMSG_LENGTH_MAX] = {};
  bool created = false;
  bool started = false;

  // Here rather than in ~JpegDecoder, which a constructor that throws (a
  // corrupt header) never reaches. Destroying also aborts a decompression
  // that was not read to its end.
  ~JpegState() {
    if (created) jpeg_destroy_decompress(&info);
  }
};

namespace {

JpegState& state_of(j_common_ptr info) {
  // client_data points back at the JpegState that owns `info`.
  return *static_cast<JpegState*>(info->client_data);
}

void fail(j_common_ptr info) {
  JpegState& s = state_of(info);
  (*info->err->format_message)(info, s.message);
  std::longjmp(s.jump, 1);
}

// Warnings (level -1) report corrupt data that libjpeg decodes past. A file
// that ends early would be filled with gray and train as if it were whole, so
// that one fails, as PIL fails truncated files; the others (stray bytes
// between markers, common in real collections) pass, as in PIL. Trace
// messages (level >= 0) are dropped: nothing is printed.
void on_message(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) fail(info);
}

// Phases: each returns false with JpegState::message set if libjpeg failed.

bool create_phase(JpegState* s) {
  if (setjmp(s->jump)) return false;
  jpeg_create_decompress(&s->info);
  s->created = true;
  return true;
}

bool read_header_phase(JpegState* s, const unsigned char* data, unsigned long size) {
  if (setjmp(s->jump)) return false;
  jpeg_mem_src(&s->info, data, size);
  jpeg_read_header(&s->info, TRUE);
  return true;
}

bool scale_phase(JpegState* s, int eighths, J_COLOR_SPACE out) {
  if (setjmp(s->jump)) return false;
  s->info.scale_num = static_cast<unsigned int>(eighths);
  s->info.scale_denom = 8;
  s->info.out_color_space = out;
  jpeg_calc_output_dimensions(&s->info);
  return true;
}

bool start_phase(JpegState* s, JDIMENSION* x0, JDIMENSION* width) {
  if (setjmp(s->jump)) return false;
  jpeg_start_decompress(&s->info);
  s->started = true;
  if (*width < s->info.output_width) jpeg_crop_scanline(&s->info, x0, width);
  return true;
}

bool read_rows_phase(JpegState* s, JDIMENSION y0, JDIMENSION rows, unsigned char* out, size_t stride) {
  if (setjmp(s->jump)) return false;
  if (y0 > 0 && jpeg_skip_scanlines(&s->info, y0) != y0) {
    std::snprintf(s->message, sizeof s->message, "could not skip to row %u", static_cast<unsigned>(y0));
    return false;
  }
  for (JDIMENSION r = 0; r < rows; ++r) {
    JSAMPROW row = out + r * stride;
    if (jpeg_read_scanlines(&s->info, &row, 1) != 1) {
      std::snprintf(s->message, sizeof s->message, "no data for row %u", static_cast<unsigned>(y0 + r));
      return false;
    }
  }
  return true;
}

// The colour space to decode to, and what its pixels are.
J_COLOR_SPACE output_space(const jpeg_decompress_struct& info, bool gray, PixelKind* kind) {
  switch (info.jpeg_color_space) {
    case JCS_GRAYSCALE:
      *kind = PixelKind::kGray;
      return JCS_GRAYSCALE;
    case JCS_YCbCr:
    case JCS_RGB:
      *kind = gray ? PixelKind::kGray : PixelKind::kRgb;
      return gray ? JCS_GRAYSCALE : JCS_RGB;
    case JCS_CMYK:
    case JCS_YCCK:  // libjpeg turns YCCK into CMYK
      // The Adobe marker is how a JPEG says it holds CMYK at all; Adobe's
      // applications, which write nearly all of them, store inverted values
      // (as PIL, browsers and ImageMagick assume). Without it, plain ink.
      *kind = info.saw_Adobe_marker ? PixelKind::kInvertedCmyk : PixelKind::kCmyk;
      return JCS_CMYK;
    default:
      throw BadImage(fmt::format("JPEG with {} components in an unsupported colour space", info.num_components));
  }
}

}  // namespace

JpegDecoder::JpegDecoder(const std::vector<uint8_t>& bytes) : state_(std::make_unique<JpegState>()) {
  JpegState& s = *state_;
  s.info.err = jpeg_std_error(&s.errors);
  s.errors.error_exit = fail;
  s.errors.emit_message = on_message;
  s.info.client_data = &s;
  if (!create_phase(&s)) throw std::runtime_error(std::string("libjpeg: ") + s.message);
  if (!read_header_phase(&s, bytes.data(), static_cast<unsigned long>(bytes.size()))) throw BadImage(s.message);
  const auto pixels = static_cast<int64_t>(s.info.image_width) * s.info.image_height;
  if (pixels > kMaxImagePixels) {
    throw BadImage(fmt::format("JPEG of {}x{} pixels, more than the {} decoded", s.info.image_width,
                               s.info.image_height, kMaxImagePixels));
  }
}

JpegDecoder::~JpegDecoder() = default;

ImageSize JpegDecoder::size() const { return {state_->info.image_width, state_->info.image_height}; }

ImageSize JpegDecoder::scaled_size(int eighths) {
  JpegState& s = *state_;
  PixelKind kind{};
  if (!scale_phase(&s, eighths, output_space(s.info, false, &kind))) throw BadImage(s.message);
  return {s.info.output_width, s.info.output_height};
}

PixelWindow JpegDecoder::decode(int eighths, int64_t x0, int64_t x1, int64_t y0, int64_t y1, bool gray) {
  JpegState& s = *state_;
  if (s.started) throw std::logic_error("JpegDecoder::decode called twice");
  PixelWindow w;
  if (!scale_phase(&s, eighths, output_space(s.info, gray, &w.kind))) throw BadImage(s.message);
  const auto full = ImageSize{s.info.output_width, s.info.output_height};
  if (x0 < 0 || x1 > full.width || x0 >= x1 || y0 < 0 || y1 > full.height || y0 >= y1) {
    throw std::out_of_range(fmt::format("JPEG window [{}, {}) x [{}, {}) outside the decoded {}x{}", x0, x1, y0, y1,
                                        full.width, full.height));
  }
  auto left = static_cast<JDIMENSION>(x0);
  auto width = static_cast<JDIMENSION>(x1 - x0);
  if (!start_phase(&s, &left, &width)) throw BadImage(s.message);
  w.x = left;
  w.y = y0;
  w.width = width;
  w.height = y1 - y0;
  const auto stride = static_cast<size_t>(w.width * bytes_per_pixel(w.kind));
  w.data.resize(stride * static_cast<size_t>(w.height));
  if (!read_rows_phase(&s, static_cast<JDIMENSION>(y0), static_cast<JDIMENSION>(w.height), w.data.data(), stride)) {
    throw BadImage(s.message);
  }
  return w;
}

}  // namespace tula::data
