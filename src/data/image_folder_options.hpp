// What `--dataset imagefolder` is told besides its directory. Plain data, no
// LibTorch: the options travel with DatasetOptions and the run's records.
#pragma once
#include <cstdint>
#include <string>

namespace tula::data {

// What a sample whose file cannot be decoded (unreadable, truncated, not an
// image) becomes.
enum class OnBadImage {
  kSkip,  // a warning naming the file, and the next good file of its class in its place
  kFail,  // std::runtime_error naming the file
};

struct ImageFolderOptions {
  // S: every sample is [channels, S, S]. 0: 224, the size ImageNet models are
  // trained at.
  int64_t image_size = 0;
  int64_t channels = 3;  // 3: RGB (gray expanded); 1: luminance
  // Files decoded at once by one gather. 0: min(4, hardware threads).
  int64_t decode_threads = 0;
  // The training split's samples get RandomResizedCrop + horizontal flip;
  // false (or the test split) gives every sample the evaluation transform.
  bool augment = true;
  // The evaluation transform's centre crop: Resize(S / eval_crop) then
  // CenterCrop(S). 7/8 is ImageNet's recipe (256 then 224); 1 resizes the
  // shorter side to S and keeps it whole, which leaves an image already of
  // S x S as it is (small images such as Fashion-MNIST's).
  double eval_crop = 0.875;
  // Keep every image decoded once in memory, at a shorter side of at least
  // 2 x image_size (JPEGs decoded at the fast DCT scale that allows it), up
  // to cache_budget_bytes in all; samples are then cut from the memory copy
  // (the same crops and flips, from a possibly smaller image). For data sets
  // small enough to fit, where decoding would repeat every epoch.
  bool cache_decoded = false;
  int64_t cache_budget_bytes = 0;
  OnBadImage on_bad_image = OnBadImage::kSkip;
  // A folder of class folders with no train/ and val/ (CalTech-101's layout)
  // is split here: this fraction of each class, chosen by split_seed alone,
  // is the test split, the rest the training split. The same (fraction,
  // seed) gives the same split on every machine, whatever the run's seed.
  double held_out_fraction = 0.2;
  uint64_t split_seed = 0;
  // Decoding threads in the idle scheduling class, as the loader's producer
  // (see kernels/thread_limits.hpp): they fill the cores training leaves.
  bool idle_priority = true;
};

// "skip" or "fail"; throws std::invalid_argument naming the word otherwise.
OnBadImage parse_on_bad_image(const std::string& word);
std::string on_bad_image_name(OnBadImage value);

}  // namespace tula::data
