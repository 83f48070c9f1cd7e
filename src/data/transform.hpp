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
// A batch of bytes (uint8) is cropped and flipped alike, giving 255 times
// the float batch's values; it is resized and normalized on the device
// (train/device_input.hpp), so those options throw for it.
Batch apply_transform(Batch batch, const TransformOptions& options, uint64_t seed);

// The two steps of the transform that also run on a device (for batches that
// travel as bytes), so that both places compute the same values.
// Float images [N, C, H, W] resized (bilinear) to size x size.
torch::Tensor resize_images(const torch::Tensor& images, int64_t size);
// (images - mean) / std per channel, in place; one value applies to every
// channel. Throws std::invalid_argument for counts that match neither or a
// std that is not positive.
void normalize_images_(torch::Tensor& images, const std::vector<double>& mean, const std::vector<double>& std);

}  // namespace tula::data
