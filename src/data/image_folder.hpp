// `--dataset imagefolder`: JPEG and PNG files in class folders (see
// image_folder_listing.hpp for the layouts), streamed: only the file list is
// held, and each gather reads and decodes its samples, side by side on a few
// threads, into fixed-size float (or byte) images. The loader's prefetch queue runs the
// gathers ahead of training, so nothing else is needed to overlap them.
//
// Samples, at S = image_size:
//   training split, augment:  RandomResizedCrop(S, scale 0.08-1, ratio 3/4-4/3)
//                              + horizontal flip (p = 1/2)
//   otherwise:                Resize(round(S * 8 / 7)) + CenterCrop(S)
// both with PIL's bilinear filter (resample.hpp), in [0, 1]; normalization is
// left to the loader's transform, as for every data set.
//
// Randomness: the loader gives each batch a seed, mix(loader seed, batch
// index), and the trainer's loader seed is mix(mix(seed, epoch), rank); the
// sample at file index i of that batch draws from mix(mix(batch seed, stream),
// i). So every crop is a pure function of (run seed, epoch, rank, batch, file):
// a resumed run repeats them, and the prefetch thread's timing changes nothing.
// gather() without a seed (evaluation, statistics) never augments.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "data/image_folder_listing.hpp"
#include "data/image_sample.hpp"

namespace tula::data {

class DecodePool;

class ImageFolderDataset : public Dataset {
 public:
  // `options` as checked by open_image_folder (image_size and decode_threads
  // already resolved from 0).
  ImageFolderDataset(ImageFolderListing listing, const ImageFolderOptions& options, Split split);
  ~ImageFolderDataset() override;

  std::string name() const override { return "imagefolder"; }
  int64_t size() const override { return static_cast<int64_t>(listing_.files.size()); }
  SampleShape shape() const override { return {spec_.channels, spec_.size, spec_.size}; }
  int64_t num_classes() const override { return static_cast<int64_t>(listing_.classes.size()); }
  // The evaluation transform, for any split.
  Batch gather(const std::vector<int64_t>& indices) const override;
  // The training augmentation when this set augments (training split,
  // options.augment), drawn from `seed`; else as gather().
  Batch gather_seeded(const std::vector<int64_t>& indices, uint64_t seed) const override;
  // gather_seeded's samples rounded to bytes, never normalized on decode.
  Batch gather_bytes(const std::vector<int64_t>& indices, uint64_t seed) const override;
  // 3 channels: ImageNet's statistics (0.485, 0.456, 0.406 / 0.229, 0.224,
  // 0.225), what torchvision's recipes and pretrained models use; measuring
  // a set of photos would land close to them, at the cost of decoding
  // thousands of files on every start. 1 channel: there is no such
  // convention (a gray set may be X-rays or documents), so it is measured,
  // on first use, over at most 1,000 files chosen by a fixed seed (the same
  // files on every run), at the evaluation transform.
  std::vector<double> channel_mean() const override;
  std::vector<double> channel_std() const override;
  // Distinct files found undecodable so far (each is warned about once and,
  // under OnBadImage::kSkip, never read again).
  int64_t bad_images() const override;

  // Normalizes every sample as it is decoded, (v - mean) / std per channel,
  // instead of the loader's transform doing it over the whole batch again
  // (which then must not). channel_mean() and channel_std() keep reporting
  // the raw statistics (measured first, where they are measured).
  void normalize_on_decode(const std::vector<double>& mean, const std::vector<double>& std);

  const ImageFolderListing& listing() const { return listing_; }
  bool augments() const { return augment_; }
  int64_t decode_threads() const;
  // Bytes of decoded images held in memory (0 without cache_decoded).
  int64_t cached_bytes() const;
  OnBadImage on_bad_image() const { return on_bad_image_; }

 private:
  Batch decode_batch(const std::vector<int64_t>& indices, bool augment, uint64_t seed, bool bytes) const;
  // Decodes file `index` (or, when it is bad and the set skips, the next
  // good file of its class) into out.
  void decode_sample_at(int64_t index, bool augment, uint64_t seed, SampleOut out) const;
  bool known_bad(int64_t file) const;
  void mark_bad(int64_t file, const std::string& reason) const;
  void compute_gray_stats() const;

  // The decoded copy of `file` (from the cache, or decoded now and kept while
  // the budget lasts); throws as decoding does.
  std::shared_ptr<const PixelWindow> cached_pixels(int64_t file, const std::string& path) const;

  ImageFolderListing listing_;
  SampleSpec spec_;
  bool cache_decoded_ = false;
  int64_t cache_budget_bytes_ = 0;
  mutable std::mutex cache_mutex_;
  mutable std::vector<std::shared_ptr<const PixelWindow>> cache_;
  mutable int64_t cached_bytes_ = 0;
  mutable bool cache_full_said_ = false;
  bool augment_;
  OnBadImage on_bad_image_;
  std::unique_ptr<DecodePool> pool_;

  mutable std::mutex bad_mutex_;
  mutable std::set<int64_t> bad_files_;

  mutable std::once_flag stats_once_;
  mutable double gray_mean_ = 0, gray_std_ = 0;
};

// The number of files channel statistics are measured on, at most.
constexpr int64_t kStatsSampleFiles = 1000;

// The sample size when image_size is 0.
constexpr int64_t kDefaultImageSize = 224;

// Opens split `split` of the image folder data set in options.data_dir with
// options.image_folder; throws as list_image_folder does, and
// std::invalid_argument for options out of range (image_size < 0, channels
// not 1 or 3, decode_threads < 0).
std::shared_ptr<ImageFolderDataset> open_image_folder(const DatasetOptions& options, Split split);

}  // namespace tula::data
