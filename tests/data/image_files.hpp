// Writers of small JPEG and PNG files for the image folder tests, made in
// the test (with the same libraries the data set reads them with) from a
// function of the pixel position, so no image is stored in the repository.
#pragma once
#include <png.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include <jpeglib.h>

#include "data/test_files.hpp"

namespace tula::data::testing {

// The bytes of pixel (x, y): 1, 3 or 4 of them.
using PixelFn = std::function<std::vector<uint8_t>(int x, int y)>;

inline PixelFn flat(std::vector<uint8_t> value) {
  return [value](int, int) { return value; };
}

struct JpegSpec {
  int width = 40;
  int height = 30;
  J_COLOR_SPACE space = JCS_RGB;  // JCS_GRAYSCALE, JCS_RGB or JCS_CMYK (bytes as given)
  int quality = 95;
  bool adobe_marker = true;  // CMYK only: libjpeg writes one unless told not to
};

inline Bytes jpeg_bytes(const JpegSpec& spec, const PixelFn& pixel) {
  jpeg_compress_struct info{};
  jpeg_error_mgr errors{};
  info.err = jpeg_std_error(&errors);  // a failure exits with libjpeg's message: the writer's inputs are fixed
  jpeg_create_compress(&info);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &out, &size);
  info.image_width = static_cast<JDIMENSION>(spec.width);
  info.image_height = static_cast<JDIMENSION>(spec.height);
  info.input_components = spec.space == JCS_GRAYSCALE ? 1 : spec.space == JCS_CMYK ? 4 : 3;
  info.in_color_space = spec.space;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, spec.quality, TRUE);
  if (spec.space == JCS_CMYK) info.write_Adobe_marker = spec.adobe_marker ? TRUE : FALSE;
  jpeg_start_compress(&info, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(spec.width * info.input_components));
  for (int y = 0; y < spec.height; ++y) {
    for (int x = 0; x < spec.width; ++x) {
      const auto p = pixel(x, y);
      for (int c = 0; c < info.input_components; ++c) row[static_cast<size_t>(x * info.input_components + c)] = p[static_cast<size_t>(c)];
    }
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&info, &r, 1);
  }
  jpeg_finish_compress(&info);
  Bytes bytes(out, out + size);
  jpeg_destroy_compress(&info);
  std::free(out);
  return bytes;
}

inline Bytes read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_jpeg(const std::string& path, const JpegSpec& spec, const PixelFn& pixel) {
  write_file(path, jpeg_bytes(spec, pixel));
}

struct PngSpec {
  int width = 40;
  int height = 30;
  // PNG_FORMAT_GRAY, _GA, _RGB, _RGBA; with PNG_FORMAT_FLAG_LINEAR 16-bit
  // samples (PixelFn then gives high, low byte pairs); PNG_FORMAT_RGBA_COLORMAP
  // a palette (PixelFn gives the index as one byte).
  uint32_t format = PNG_FORMAT_RGB;
  std::vector<uint8_t> colormap;  // RGBA entries, for a palette
};

inline void write_png(const std::string& path, const PngSpec& spec, const PixelFn& pixel) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(spec.width);
  image.height = static_cast<png_uint_32>(spec.height);
  image.format = spec.format;
  const bool palette = (spec.format & PNG_FORMAT_FLAG_COLORMAP) != 0;
  if (palette) image.colormap_entries = static_cast<png_uint_32>(spec.colormap.size() / 4);
  const size_t sample_bytes = (spec.format & PNG_FORMAT_FLAG_LINEAR) != 0 ? 2 : 1;
  const size_t channels = palette ? 1 : PNG_IMAGE_SAMPLE_CHANNELS(spec.format);
  const size_t pixel_bytes = palette ? 1 : channels * sample_bytes;
  std::vector<uint8_t> data(static_cast<size_t>(spec.width * spec.height) * pixel_bytes);
  for (int y = 0; y < spec.height; ++y) {
    for (int x = 0; x < spec.width; ++x) {
      const auto p = pixel(x, y);
      uint8_t* d = &data[(static_cast<size_t>(y * spec.width + x)) * pixel_bytes];
      if (sample_bytes == 2) {
        // The writer takes native-endian 16-bit samples.
        for (size_t c = 0; c < channels; ++c) {
          const uint16_t v = static_cast<uint16_t>(p[2 * c] << 8 | p[2 * c + 1]);
          std::memcpy(d + 2 * c, &v, 2);
        }
      } else {
        for (size_t c = 0; c < pixel_bytes; ++c) d[c] = p[c];
      }
    }
  }
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  if (png_image_write_to_file(&image, path.c_str(), 0, data.data(), 0, palette ? spec.colormap.data() : nullptr) == 0) {
    throw std::runtime_error("cannot write " + path + ": " + image.message);
  }
}

}  // namespace tula::data::testing
