// Helpers for the data tests: a temporary directory and writers for small
// IDX and CIFAR files.
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

namespace tula::data::testing {

using Bytes = std::vector<uint8_t>;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tula_data_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_file(const std::string& path, const Bytes& bytes) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline Bytes gzip(const Bytes& bytes) {
  // Through a temporary file: gzopen/gzwrite is the API the reader mirrors.
  const auto tmp = std::filesystem::temp_directory_path() /
                   ("tula_gzip_" + std::to_string(reinterpret_cast<uintptr_t>(&bytes)) + ".gz");
  gzFile f = gzopen(tmp.string().c_str(), "wb");
  if (f == nullptr) throw std::runtime_error("gzopen failed");
  if (!bytes.empty()) gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
  std::ifstream in(tmp, std::ios::binary);
  Bytes out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove(tmp);
  return out;
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

// Expects `fn` to throw an exception whose message contains every one of `parts`.
template <typename Exception = std::runtime_error>
void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const Exception& e) {
    const std::string message = e.what();
    for (const auto& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "message \"" << message << "\" lacks \"" << part << "\"";
    }
    return;
  }
  ADD_FAILURE() << "no exception thrown";
}

}  // namespace tula::data::testing
