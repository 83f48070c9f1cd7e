// Helpers for the data tests: writers for small IDX and CIFAR files, in the
// temporary directories of helpers/temp_dir.hpp, and helpers/expect_error.hpp.
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "helpers/expect_error.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::data::testing {

using Bytes = std::vector<uint8_t>;

using tula::testing::expect_error;
using tula::testing::TempDir;

inline void write_file(const std::string& path, const Bytes& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline Bytes gzip(const Bytes& bytes) {
  // Through a temporary file: gzopen/gzwrite is the API the reader mirrors.
  const TempDir dir("tula-gzip");
  const auto tmp = dir.path() / "bytes.gz";
  gzFile f = gzopen(tmp.string().c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("gzopen failed");
  if (!bytes.empty()) gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  std::ifstream in(tmp, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void put32(Bytes& bytes, uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8)
    bytes.push_back(static_cast<uint8_t>(value >> shift));
}

// Pixel j of image i is (i * 7 + j * 3) % 256: distinct enough to catch mix-ups.
inline uint8_t idx_pixel(int64_t image, int64_t pixel) {
  return static_cast<uint8_t>((image * 7 + pixel * 3) % 256);
}

inline Bytes idx_images(uint32_t count, uint32_t rows, uint32_t cols) {
  Bytes bytes;
  put32(bytes, 0x00000803);
  put32(bytes, count);
  put32(bytes, rows);
  put32(bytes, cols);
  for (uint32_t i = 0; i < count; ++i) {
    for (uint32_t j = 0; j < rows * cols; ++j) bytes.push_back(idx_pixel(i, j));
  }
  return bytes;
}

inline Bytes idx_labels(const std::vector<uint8_t>& labels) {
  Bytes bytes;
  put32(bytes, 0x00000801);
  put32(bytes, static_cast<uint32_t>(labels.size()));
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

// One CIFAR record: label byte(s), then 3072 pixel bytes derived from `seed`.
inline Bytes cifar_record(const std::vector<uint8_t>& label_bytes, int64_t seed) {
  Bytes bytes(label_bytes);
  for (int64_t j = 0; j < 3072; ++j) bytes.push_back(static_cast<uint8_t>((seed * 11 + j) % 251));
  return bytes;
}

inline void append(Bytes& to, const Bytes& more) { to.insert(to.end(), more.begin(), more.end()); }

}  // namespace tula::data::testing
