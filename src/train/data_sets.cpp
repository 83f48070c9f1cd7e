#include "train/data_sets.hpp"

#include <algorithm>
#include <fstream>

#include "common/engine_names.hpp"
#include "data/image_folder.hpp"
#include "data/image_folder_options.hpp"
#include "models/zoo.hpp"
#include "models/script_model.hpp"

namespace tula::train {
namespace {

// MemAvailable of /proc/meminfo: what can be allocated without swapping (0
// where it cannot be read, which turns the cache off).
int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

}  // namespace

bool is_image_folder(const std::string& dataset) { return common::canonical_dataset_name(dataset) == "imagefolder"; }

int64_t image_channels(const DataOptions& data, const std::string& model) {
  if (data.image_channels > 0) return data.image_channels;
  if (common::is_script_model_path(model)) {
    if (const int64_t c = models::script_model_input_channels(model); c > 0) return c;
  }
  return 3;
}

DataOptions with_image_channels(DataOptions data, const std::string& model) {
  if (is_image_folder(data.dataset)) data.image_channels = image_channels(data, model);
  return data;
}

data::DatasetOptions dataset_options(const DataOptions& o, const std::string& model, uint64_t seed,
                                     data::Split split, int64_t local_workers) {
  data::DatasetOptions d;
  d.name = o.dataset;
  d.data_dir = o.data_dir.empty() ? data::default_data_dir(o.dataset) : o.data_dir;
  d.synthetic_size = split == data::Split::kTrain ? o.synthetic_size : std::max<int64_t>(1, o.synthetic_size / 5);
  d.synthetic_shape = {o.synthetic_channels, o.synthetic_height, o.synthetic_width};
  d.synthetic_classes = o.synthetic_classes;
  d.seed = seed + (split == data::Split::kTrain ? 0 : 1);
  if (is_image_folder(o.dataset)) {
    auto& f = d.image_folder;
    f.image_size = o.image_size;
    f.channels = image_channels(o, model);
    f.decode_threads = o.decode_threads;
    f.augment = o.augment;
    f.eval_crop = o.eval_crop;
    f.on_bad_image = data::parse_on_bad_image(o.on_bad_image);
    // A folder with no train/ and val/ is split by this seed alone: the same
    // test images for every training seed (and both splits see one draw).
    f.split_seed = o.validation_seed;
    f.cache_decoded = o.cache_decoded;
    if (o.cache_decoded) f.cache_budget_bytes = available_memory_bytes() / 4 / std::max<int64_t>(1, local_workers);
  }
  return d;
}

BatchTransforms batch_transforms(const DataOptions& data, const std::string& model, const data::Dataset& train_set,
                                 const std::vector<std::shared_ptr<data::ImageFolderDataset>>& decoding) {
  BatchTransforms t;
  const auto shape = train_set.shape();
  const bool real_data = data.dataset != "synthetic";
  t.image_size = models::input_size(model, data.image_size, shape.height, shape.width);
  t.train.train = true;
  t.train.image_size = t.image_size == shape.height && t.image_size == shape.width ? 0 : t.image_size;
  t.normalization = choose_normalization(data.normalize, train_set, real_data);
  if (!decoding.empty() && !t.normalization.mean.empty()) {
    // Folded into the decode: the batch is not read a second time for it.
    for (const auto& set : decoding) set->normalize_on_decode(t.normalization.mean, t.normalization.std);
  } else {
    t.train.mean = t.normalization.mean;
    t.train.std = t.normalization.std;
  }
  // An image folder crops, flips and resizes while it decodes (RandomResizedCrop
  // at --image-size): the batch transform only normalizes.
  if (real_data && data.augment && !is_image_folder(data.dataset)) {
    t.train.crop_padding = std::max<int64_t>(2, shape.height / 8);  // 4 px at 32, 3 at 28
    t.train.horizontal_flip = true;
  }
  t.test = t.train;
  t.test.train = false;
  return t;
}

}  // namespace tula::train
