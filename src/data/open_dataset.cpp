#include <stdexcept>

#include "common/engine_names.hpp"
#include "data/formats.hpp"

namespace tula::data {
namespace {

// The names live with the LibTorch-free parts, which check them before a job starts.
std::string canonical_name(const std::string& name) { return common::canonical_dataset_name(name); }
std::string known_names() { return common::join_names(common::dataset_names()); }

}  // namespace

std::string default_data_dir(const std::string& name) {
  const std::string canonical = canonical_name(name);
  if (canonical.empty()) {
    throw std::invalid_argument("unknown data set '" + name + "' (known: " + known_names() + ")");
  }
  // Synthetic data has no files, and an image folder is wherever its owner put it.
  if (canonical == "synthetic" || canonical == "imagefolder") return "";
  return "/usr/share/datasets/" + canonical;
}

std::shared_ptr<Dataset> open_dataset(const DatasetOptions& options, Split split) {
  const std::string canonical = canonical_name(options.name);
  if (canonical.empty()) {
    throw std::invalid_argument("unknown data set '" + options.name + "' (known: " + known_names() +
                                ")");
  }
  if (canonical == "synthetic") return open_synthetic(options, split);
  if (canonical == "imagefolder") return open_image_folder_dataset(options, split);
  const std::string dir = options.data_dir.empty() ? default_data_dir(canonical) : options.data_dir;
  if (canonical == "cifar10") return open_cifar10(dir, split);
  if (canonical == "cifar100") return open_cifar100(dir, split);
  return open_idx(canonical, dir, split);
}

}  // namespace tula::data
