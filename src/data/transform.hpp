// Training augmentation (random crop with zero padding, horizontal flip),
// resizing to a model's input size, and normalization, applied batch-wise.
#pragma once
#include <cstdint>
#include <vector>

#include "data/dataset.hpp"

namespace tula::data {

struct TransformOptions {
  bool train = true;       // augmentation only when training
  int64_t crop_padding = 0;  // 0: no random crop
  bool horizontal_flip = false;
  int64_t image_size = 0;  // 0: keep the data set's size; else resize (bilinear) to it
  std::vector<double> mean;  // empty: no normalization
  std::vector<double> std;
};

// Applies the transform in place of batch.images; `seed` makes the random
// choices a pure function of (seed), so a resumed run repeats them. The
// batch is taken: normalization writes into its images tensor, which a copy
// of the Batch shares (pass a fresh batch, or one with cloned images).
Batch apply_transform(Batch batch, const TransformOptions& options, uint64_t seed);

}  // namespace tula::data
