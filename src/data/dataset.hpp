// Data sets held in memory (IDX, CIFAR binary), generated (synthetic) or
// decoded from image files as they are drawn (imagefolder), behind one
// interface the loader draws batches from.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "data/image_folder_options.hpp"

namespace tula::data {

// One batch: images float32 [n, C, H, W] scaled to [0, 1] before the transform
// (or, gathered as bytes, uint8 [n, C, H, W] of the 8-bit values themselves),
// labels int64 [n].
struct Batch {
  torch::Tensor images;
  torch::Tensor labels;
};

struct SampleShape {
  int64_t channels = 0;
  int64_t height = 0;
  int64_t width = 0;
};

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string name() const = 0;
  virtual int64_t size() const = 0;
  virtual SampleShape shape() const = 0;
  virtual int64_t num_classes() const = 0;
  // The samples at `indices`, in that order, as float images in [0, 1].
  virtual Batch gather(const std::vector<int64_t>& indices) const = 0;
  // The same for one training batch whose random choices come from `seed`
  // (the loader's seed of that batch): data sets that augment while decoding
  // (imagefolder) draw their crops from it, so a resumed run repeats them.
  // The others have nothing to draw and gather.
  virtual Batch gather_seeded(const std::vector<int64_t>& indices, uint64_t seed) const {
    (void)seed;
    return gather(indices);
  }
  // The training batch of gather_seeded as 8-bit pixels, uint8 [n, C, H, W]:
  // a quarter of the bytes to copy to a device, converted to float there
  // (train/device_input.hpp). Every set here has 8-bit pixels: for IDX,
  // CIFAR and synthetic sets the bytes are exactly 255 times gather_seeded's
  // values; an image folder rounds its resampled values to the nearest byte
  // (as PIL does), so they differ from its floats by at most half a step.
  virtual Batch gather_bytes(const std::vector<int64_t>& indices, uint64_t seed) const = 0;
  // Per-channel mean and standard deviation of the images in [0, 1], used to
  // normalize; computed from the data for real sets.
  virtual std::vector<double> channel_mean() const = 0;
  virtual std::vector<double> channel_std() const = 0;
  // Samples so far whose files could not be decoded and were replaced (see
  // OnBadImage); 0 for sets read whole when opened.
  virtual int64_t bad_images() const { return 0; }
};

enum class Split { kTrain, kTest };

// Opens a data set by name: "fashion-mnist" or "mnist" (IDX files, plain or
// .gz, in data_dir), "cifar10", "cifar100" (the binary versions' files in
// data_dir), "synthetic" (the synthetic_* fields: random images generated from
// (seed, split, index), synthetic_size samples in each split), "imagefolder"
// (JPEG and PNG files in class folders under data_dir, decoded when gathered;
// see image_folder.hpp and the image_folder fields). Throws
// std::runtime_error naming the missing or corrupt file or folder,
// std::invalid_argument for an unknown name.
struct DatasetOptions {
  std::string name;
  std::string data_dir;
  // synthetic only
  int64_t synthetic_size = 10000;
  SampleShape synthetic_shape{3, 32, 32};
  int64_t synthetic_classes = 10;
  uint64_t seed = 0;
  // imagefolder only
  ImageFolderOptions image_folder;
};
std::shared_ptr<Dataset> open_dataset(const DatasetOptions& options, Split split);

// The directory a named data set is found in when none is given
// (/usr/share/datasets/fashion-mnist for Fashion-MNIST, as Debian installs it).
std::string default_data_dir(const std::string& name);

}  // namespace tula::data
