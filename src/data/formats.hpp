// The readers behind open_dataset(), one per file format.
#pragma once
#include <memory>
#include <string>

#include "data/dataset.hpp"

namespace tula::data {

// MNIST-style IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte,
// t10k-*), each plain or with a .gz suffix. `name` only labels the set.
std::shared_ptr<Dataset> open_idx(const std::string& name, const std::string& dir, Split split);

// CIFAR binary versions, in `dir` or its cifar-10-batches-bin /
// cifar-100-binary subfolder.
std::shared_ptr<Dataset> open_cifar10(const std::string& dir, Split split);
std::shared_ptr<Dataset> open_cifar100(const std::string& dir, Split split);

// Samples generated from (seed, split, index) on gather; see synthetic_dataset.cpp.
std::shared_ptr<Dataset> open_synthetic(const DatasetOptions& options, Split split);

// JPEG and PNG files in class folders, decoded on gather; see image_folder.hpp.
std::shared_ptr<Dataset> open_image_folder_dataset(const DatasetOptions& options, Split split);

}  // namespace tula::data
