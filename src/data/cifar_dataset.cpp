// CIFAR-10 and CIFAR-100 binary versions: fixed-size records of label
// byte(s) followed by a 32x32 image stored channel by channel (all red, all
// green, all blue), i.e. already in [C, H, W] order.
#include <fmt/format.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "data/file_reader.hpp"
#include "data/formats.hpp"
#include "data/in_memory_dataset.hpp"

namespace tula::data {
namespace {

constexpr int64_t kImageBytes = 3 * 32 * 32;

struct CifarFormat {
  std::string name;
  std::string subfolder;
  std::vector<std::string> train_files;
  std::vector<std::string> test_files;
  int64_t label_bytes;   // CIFAR-100 has a coarse label before the fine one
  int64_t label_offset;  // which label byte is the class
  int64_t num_classes;
  int64_t coarse_classes;  // 0: no coarse label
};

const CifarFormat& cifar10_format() {
  static const CifarFormat format{"cifar10",
                                  "cifar-10-batches-bin",
                                  {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                   "data_batch_4.bin", "data_batch_5.bin"},
                                  {"test_batch.bin"},
                                  1,
                                  0,
                                  10,
                                  0};
  return format;
}

const CifarFormat& cifar100_format() {
  static const CifarFormat format{
      "cifar100", "cifar-100-binary", {"train.bin"}, {"test.bin"}, 2, 1, 100, 20};
  return format;
}

// `dir` itself when it holds the first file, else the archive's subfolder.
std::filesystem::path find_cifar_dir(const CifarFormat& format, const std::string& dir,
                                     const std::string& first_file) {
  const std::filesystem::path top(dir);
  std::error_code ec;
  if (std::filesystem::exists(top / first_file, ec)) return top;
  if (std::filesystem::exists(top / format.subfolder / first_file, ec))
    return top / format.subfolder;
  throw std::runtime_error(format.name + ": missing " + (top / first_file).string() + " (nor " +
                           (top / format.subfolder / first_file).string() + ")");
}

void check_size(const CifarFormat& format, const std::string& path, int64_t size, int64_t record) {
  if (size == 0) throw std::runtime_error(path + ": empty file");
  if (size % record != 0) {
    throw std::runtime_error(fmt::format(
        "{}: size {} bytes is not a multiple of the {}-byte record (truncated, or not a {} binary file)", path, size,
        record, format.name));
  }
}

std::shared_ptr<Dataset> open_cifar(const CifarFormat& format, const std::string& dir,
                                    Split split) {
  const auto& files = split == Split::kTrain ? format.train_files : format.test_files;
  const auto folder = find_cifar_dir(format, dir, files.front());
  const int64_t record = format.label_bytes + kImageBytes;

  // Sizes first, so the images tensor is allocated once and each file's
  // bytes are held only while they are copied into it.
  std::vector<std::string> paths;
  int64_t total = 0;
  for (const auto& file : files) {
    paths.push_back((folder / file).string());
    std::error_code ec;
    if (!std::filesystem::is_regular_file(paths.back(), ec)) {
      throw std::runtime_error(format.name + ": missing " + paths.back());
    }
    const auto size = static_cast<int64_t>(std::filesystem::file_size(paths.back(), ec));
    if (ec) throw std::runtime_error(paths.back() + ": cannot get size: " + ec.message());
    check_size(format, paths.back(), size, record);
    total += size / record;
  }

  auto images = torch::empty({total, 3, 32, 32}, torch::kUInt8);
  auto labels = torch::empty({total}, torch::kInt64);
  uint8_t* image_out = images.data_ptr<uint8_t>();
  int64_t* label_out = labels.data_ptr<int64_t>();
  int64_t sample = 0;
  for (const auto& path : paths) {
    const auto bytes = read_file(path);
    // The file may have changed since it was measured.
    check_size(format, path, static_cast<int64_t>(bytes.size()), record);
    const auto records = static_cast<int64_t>(bytes.size()) / record;
    if (sample + records > total) throw std::runtime_error(path + ": grew while being read");
    for (int64_t r = 0; r < records; ++r, ++sample) {
      const uint8_t* p = bytes.data() + r * record;
      if (format.coarse_classes > 0 && p[0] >= format.coarse_classes) {
        throw std::runtime_error(fmt::format("{}: coarse label {} of record {} out of range [0, {})", path, p[0], r,
                                             format.coarse_classes));
      }
      const int64_t label = p[format.label_offset];
      if (label >= format.num_classes) {
        throw std::runtime_error(
            fmt::format("{}: label {} of record {} out of range [0, {})", path, label, r, format.num_classes));
      }
      label_out[sample] = label;
      std::memcpy(image_out + sample * kImageBytes, p + format.label_bytes, kImageBytes);
    }
  }
  if (sample != total) throw std::runtime_error(format.name + ": files shrank while being read");
  return std::make_shared<InMemoryDataset>(format.name, std::move(images), std::move(labels),
                                           format.num_classes);
}

}  // namespace

std::shared_ptr<Dataset> open_cifar10(const std::string& dir, Split split) {
  return open_cifar(cifar10_format(), dir, split);
}

std::shared_ptr<Dataset> open_cifar100(const std::string& dir, Split split) {
  return open_cifar(cifar100_format(), dir, split);
}

}  // namespace tula::data
