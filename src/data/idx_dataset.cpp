// MNIST-style IDX files: a big-endian header (magic 0x0000TTDD, where TT is
// the element type and DD the number of dimensions, then DD 32-bit sizes)
// followed by the raw elements.
#include <fmt/format.h>
#include <torch/torch.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "data/file_reader.hpp"
#include "data/formats.hpp"
#include "data/in_memory_dataset.hpp"

namespace tula::data {
namespace {

constexpr uint8_t kUnsignedByteType = 0x08;
constexpr int64_t kIdxClasses = 10;
// Far beyond any real IDX set; rejects garbage headers before a huge allocation.
constexpr int64_t kMaxElements = int64_t{1} << 34;

uint32_t big_endian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

std::string hex32(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", value);
  return text;
}

// The plain file if present, else the .gz one.
std::string find_idx_file(const std::string& set_name, const std::string& dir,
                          const std::string& base) {
  const auto plain = std::filesystem::path(dir) / base;
  std::error_code ec;
  if (std::filesystem::exists(plain, ec)) return plain.string();
  const auto gz = std::filesystem::path(dir) / (base + ".gz");
  if (std::filesystem::exists(gz, ec)) return gz.string();
  throw std::runtime_error(set_name + ": missing " + plain.string() + " (nor " + gz.string() + ")");
}

// Reads an IDX file of unsigned bytes with `ndim` dimensions; returns the
// sizes and fills `out` with the elements.
std::vector<int64_t> read_idx(GzFile& file, int ndim, torch::Tensor& out) {
  std::array<uint8_t, 4> magic_bytes{};
  file.read_exact(magic_bytes.data(), magic_bytes.size(), "header");
  const uint32_t magic = big_endian32(magic_bytes.data());
  const uint32_t expected = (uint32_t{kUnsignedByteType} << 8) | static_cast<uint32_t>(ndim);
  if (magic != expected) {
    throw std::runtime_error(fmt::format("{}: bad magic number {}, expected {} (IDX, unsigned bytes, {} dimensions)",
                                         file.path(), hex32(magic), hex32(expected), ndim));
  }
  std::vector<uint8_t> size_bytes(4 * static_cast<size_t>(ndim));
  file.read_exact(size_bytes.data(), size_bytes.size(), "header");
  std::vector<int64_t> sizes;
  int64_t elements = 1;
  for (int d = 0; d < ndim; ++d) {
    const int64_t size = big_endian32(size_bytes.data() + 4 * d);
    if (size == 0) {
      throw std::runtime_error(fmt::format("{}: dimension {} is zero", file.path(), d));
    }
    elements *= size;
    if (elements > kMaxElements) {
      throw std::runtime_error(
          fmt::format("{}: implausible dimensions in header (over {} elements)", file.path(), kMaxElements));
    }
    sizes.push_back(size);
  }
  out = torch::empty(sizes, torch::kUInt8);
  file.read_exact(out.data_ptr<uint8_t>(), static_cast<size_t>(elements), "data");
  if (!file.at_end()) {
    throw std::runtime_error(
        fmt::format("{}: trailing data after the {} bytes its header declares", file.path(), elements));
  }
  return sizes;
}

}  // namespace

std::shared_ptr<Dataset> open_idx(const std::string& name, const std::string& dir, Split split) {
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::string images_path = find_idx_file(name, dir, prefix + "-images-idx3-ubyte");
  const std::string labels_path = find_idx_file(name, dir, prefix + "-labels-idx1-ubyte");

  torch::Tensor images;
  {
    GzFile file(images_path);
    read_idx(file, 3, images);
  }
  torch::Tensor raw_labels;
  {
    GzFile file(labels_path);
    read_idx(file, 1, raw_labels);
  }
  if (images.size(0) != raw_labels.size(0)) {
    throw std::runtime_error(fmt::format("{} holds {} images but {} holds {} labels", images_path, images.size(0),
                                         labels_path, raw_labels.size(0)));
  }
  const uint8_t* label_data = raw_labels.data_ptr<uint8_t>();
  for (int64_t i = 0; i < raw_labels.size(0); ++i) {
    if (label_data[i] >= kIdxClasses) {
      throw std::runtime_error(fmt::format("{}: label {} of sample {} out of range [0, {})", labels_path,
                                           label_data[i], i, kIdxClasses));
    }
  }
  return std::make_shared<InMemoryDataset>(name, images.unsqueeze(1), raw_labels.to(torch::kInt64),
                                           kIdxClasses);
}

}  // namespace tula::data
