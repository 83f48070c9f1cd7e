// How `tula train` opens its data, shared with `tula profile` so that the
// profile measures the input training will see: the same data set options,
// and for an image folder the same channels and size.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "data/transform.hpp"
#include "train/normalization.hpp"
#include "train/train_options.hpp"

namespace tula::data {
class ImageFolderDataset;
}

namespace tula::train {

bool is_image_folder(const std::string& dataset);

// The channels an image folder is decoded to: --image-channels, else what a
// TorchScript model's first convolution takes (read from its file), else RGB.
int64_t image_channels(const DataOptions& data, const std::string& model);

// `data` with image_channels settled for an image folder, so that opening
// both splits reads a TorchScript file once, not once per split.
DataOptions with_image_channels(DataOptions data, const std::string& model);

// The options `split` of the data set is opened with. The synthetic test
// split is a fifth of the training one and drawn from seed + 1.
// `local_workers`: the workers on this machine, who share its memory (an
// image folder's --cache-decoded budget).
data::DatasetOptions dataset_options(const DataOptions& data, const std::string& model, uint64_t seed,
                                     data::Split split, int64_t local_workers = 1);

// How batches of `train_set` are prepared for `model`: the transforms of
// training and test batches, and the normalization chosen. Image folders in
// `decoding` (those opened for this run) crop, flip and resize as they decode
// and get the normalization folded into the decode instead of the transform.
struct BatchTransforms {
  data::TransformOptions train, test;
  Normalization normalization;
  int64_t image_size = 0;  // the side the model sees: the data's, or resized to it
};
BatchTransforms batch_transforms(const DataOptions& data, const std::string& model, const data::Dataset& train_set,
                                 const std::vector<std::shared_ptr<data::ImageFolderDataset>>& decoding);

}  // namespace tula::train
