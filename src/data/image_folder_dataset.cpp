#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "data/decode_pool.hpp"
#include "data/file_reader.hpp"
#include "data/formats.hpp"
#include "data/image_folder.hpp"
#include "data/rng.hpp"

namespace tula::data {
namespace {

// Separate streams for the crops and the statistics' sample, apart from the
// loader transform's (which also derives from the batch seed).
constexpr uint64_t kCropStream = 0x63726f7073ULL;   // "crops"
constexpr uint64_t kStatsSeed = 0x7374617473ULL;    // "stats"
constexpr int64_t kStatsBatch = 64;

const std::vector<double> kImageNetMean = {0.485, 0.456, 0.406};
const std::vector<double> kImageNetStd = {0.229, 0.224, 0.225};

}  // namespace

ImageFolderDataset::ImageFolderDataset(ImageFolderListing listing, const ImageFolderOptions& options, Split split)
    : listing_(std::move(listing)),
      augment_(split == Split::kTrain && options.augment),
      on_bad_image_(options.on_bad_image),
      pool_(std::make_unique<DecodePool>(options.decode_threads, options.idle_priority)) {
  spec_.size = options.image_size;
  spec_.channels = options.channels;
  spec_.eval_crop = options.eval_crop;
  cache_decoded_ = options.cache_decoded;
  cache_budget_bytes_ = options.cache_budget_bytes;
  if (cache_decoded_) cache_.resize(listing_.files.size());
}

int64_t ImageFolderDataset::cached_bytes() const {
  std::lock_guard lock(cache_mutex_);
  return cached_bytes_;
}

std::shared_ptr<const PixelWindow> ImageFolderDataset::cached_pixels(int64_t file, const std::string& path) const {
  {
    std::lock_guard lock(cache_mutex_);
    if (auto hit = cache_[static_cast<size_t>(file)]) return hit;
  }
  auto pixels = std::make_shared<const PixelWindow>(
      decode_for_cache(read_file(path), 2 * spec_.size, spec_.channels == 1));
  const auto bytes = static_cast<int64_t>(pixels->data.size());
  std::lock_guard lock(cache_mutex_);
  auto& slot = cache_[static_cast<size_t>(file)];
  if (slot) return slot;  // another thread decoded it meanwhile (a sample the sampler repeats): counted once
  if (cached_bytes_ + bytes <= cache_budget_bytes_) {
    slot = pixels;
    cached_bytes_ += bytes;
  } else if (!cache_full_said_) {
    cache_full_said_ = true;
    spdlog::warn("imagefolder: --cache-decoded: the cache is full at {} MiB (its budget); the other images are "
                 "decoded from their files each time",
                 cached_bytes_ >> 20);
  }
  return pixels;
}

ImageFolderDataset::~ImageFolderDataset() = default;

int64_t ImageFolderDataset::decode_threads() const { return pool_->threads(); }

Batch ImageFolderDataset::gather(const std::vector<int64_t>& indices) const {
  return decode_batch(indices, false, 0, false);
}

Batch ImageFolderDataset::gather_seeded(const std::vector<int64_t>& indices, uint64_t seed) const {
  return decode_batch(indices, augment_, seed, false);
}

Batch ImageFolderDataset::gather_bytes(const std::vector<int64_t>& indices, uint64_t seed) const {
  return decode_batch(indices, augment_, seed, true);
}

Batch ImageFolderDataset::decode_batch(const std::vector<int64_t>& indices, bool augment, uint64_t seed,
                                       bool bytes) const {
  const auto n = static_cast<int64_t>(indices.size());
  for (const int64_t i : indices) {
    if (i < 0 || i >= size()) {
      throw std::out_of_range(fmt::format("imagefolder: sample {} of {}, which has {}", i, listing_.root, size()));
    }
  }
  Batch batch;
  batch.images = torch::empty({n, spec_.channels, spec_.size, spec_.size}, bytes ? torch::kUInt8 : torch::kFloat32);
  batch.labels = torch::empty({n}, torch::kInt64);
  int64_t* labels = batch.labels.data_ptr<int64_t>();
  uint8_t* byte_images = bytes ? batch.images.data_ptr<uint8_t>() : nullptr;
  float* float_images = bytes ? nullptr : batch.images.data_ptr<float>();
  const int64_t per_sample = spec_.channels * spec_.size * spec_.size;
  pool_->for_each(n, [&](int64_t k) {
    const int64_t index = indices[static_cast<size_t>(k)];
    labels[k] = listing_.label_of(index);
    const SampleOut out = bytes ? SampleOut(byte_images + k * per_sample) : SampleOut(float_images + k * per_sample);
    decode_sample_at(index, augment, mix(mix(seed, kCropStream), static_cast<uint64_t>(index)), out);
  });
  return batch;
}

void ImageFolderDataset::normalize_on_decode(const std::vector<double>& mean, const std::vector<double>& std) {
  const auto channels = static_cast<size_t>(spec_.channels);
  if (mean.size() != channels || std.size() != channels) {
    throw std::invalid_argument(fmt::format("imagefolder: normalization needs {} means and deviations, got {} and {}",
                                            channels, mean.size(), std.size()));
  }
  channel_mean();  // measured (1 channel) before the decode normalizes
  for (size_t c = 0; c < channels; ++c) {
    if (!(std[c] > 0)) throw std::invalid_argument("imagefolder: standard deviations must be positive");
    spec_.affine.scale[c] = static_cast<float>(1.0 / std[c]);
    spec_.affine.shift[c] = static_cast<float>(-mean[c] / std[c]);
  }
}

void ImageFolderDataset::decode_sample_at(int64_t index, bool augment, uint64_t seed, SampleOut out) const {
  const int64_t label = listing_.label_of(index);
  const int64_t begin = listing_.class_begin[static_cast<size_t>(label)];
  const int64_t count = listing_.class_begin[static_cast<size_t>(label) + 1] - begin;
  SampleSpec spec = spec_;
  spec.augment = augment;
  // Bad files are replaced by the next good file of the same class, in path
  // order, wrapping around: the label stays right, the batch keeps its size,
  // and the replacement is the same on every run.
  for (int64_t step = 0; step < count; ++step) {
    const int64_t file = begin + (index - begin + step) % count;
    if (on_bad_image_ == OnBadImage::kSkip && known_bad(file)) continue;
    const std::string& path = listing_.files[static_cast<size_t>(file)];
    std::string reason;
    try {
      Rng rng(seed);  // afresh for each file tried: a replacement's crop does not depend on the failure
      if (cache_decoded_) {
        sample_from_pixels(*cached_pixels(file, path), spec, &rng, out);
      } else {
        decode_sample(read_file(path), spec, &rng, out);
      }
      return;
    } catch (const BadImage& e) {
      reason = path + ": " + e.what();
    } catch (const std::runtime_error& e) {
      reason = e.what();  // read_file's message names the path
    }
    if (on_bad_image_ == OnBadImage::kFail) throw std::runtime_error("imagefolder: bad image " + reason);
    mark_bad(file, reason);
  }
  throw std::runtime_error(fmt::format("imagefolder: no decodable image left in class folder {}/{} (all {} files of "
                                       "this split are bad)",
                                       listing_.root, listing_.classes[static_cast<size_t>(label)], count));
}

bool ImageFolderDataset::known_bad(int64_t file) const {
  const std::lock_guard lock(bad_mutex_);
  return bad_files_.count(file) != 0;
}

void ImageFolderDataset::mark_bad(int64_t file, const std::string& reason) const {
  bool first = false;
  {
    const std::lock_guard lock(bad_mutex_);
    first = bad_files_.insert(file).second;
  }
  if (first) spdlog::warn("imagefolder: skipping bad image {} (the next good file of its class takes its place)", reason);
}

int64_t ImageFolderDataset::bad_images() const {
  const std::lock_guard lock(bad_mutex_);
  return static_cast<int64_t>(bad_files_.size());
}

void ImageFolderDataset::compute_gray_stats() const {
  // A partial Fisher-Yates with a fixed seed: the same files on every run.
  std::vector<int64_t> order(static_cast<size_t>(size()));
  std::iota(order.begin(), order.end(), 0);
  const int64_t chosen = std::min(size(), kStatsSampleFiles);
  Rng rng(kStatsSeed);
  for (int64_t i = 0; i < chosen; ++i) {
    const auto j = i + static_cast<int64_t>(rng.below(static_cast<uint64_t>(size() - i)));
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  order.resize(static_cast<size_t>(chosen));
  std::sort(order.begin(), order.end());  // read in path order
  double sum = 0, sum_sq = 0, pixels = 0;
  for (int64_t b = 0; b < chosen; b += kStatsBatch) {
    const std::vector<int64_t> part(order.begin() + b, order.begin() + std::min(b + kStatsBatch, chosen));
    const auto images = gather(part).images.to(torch::kFloat64);
    sum += images.sum().item<double>();
    sum_sq += images.square().sum().item<double>();
    pixels += static_cast<double>(images.numel());
  }
  gray_mean_ = pixels > 0 ? sum / pixels : 0.5;
  // A set of one flat colour has no spread; 1 then leaves it unscaled.
  const double variance = pixels > 0 ? std::max(0.0, sum_sq / pixels - gray_mean_ * gray_mean_) : 0.0;
  gray_std_ = variance > 1e-12 ? std::sqrt(variance) : 1.0;
}

std::vector<double> ImageFolderDataset::channel_mean() const {
  if (spec_.channels == 3) return kImageNetMean;
  std::call_once(stats_once_, [this] { compute_gray_stats(); });
  return {gray_mean_};
}

std::vector<double> ImageFolderDataset::channel_std() const {
  if (spec_.channels == 3) return kImageNetStd;
  std::call_once(stats_once_, [this] { compute_gray_stats(); });
  return {gray_std_};
}

std::shared_ptr<ImageFolderDataset> open_image_folder(const DatasetOptions& options, Split split) {
  ImageFolderOptions o = options.image_folder;
  if (o.image_size < 0) {
    throw std::invalid_argument(fmt::format("imagefolder: image size must be >= 0 (0: 224), got {}", o.image_size));
  }
  if (o.channels != 1 && o.channels != 3) {
    throw std::invalid_argument(fmt::format("imagefolder: channels must be 1 or 3, got {}", o.channels));
  }
  if (o.decode_threads < 0) {
    throw std::invalid_argument(
        fmt::format("imagefolder: decode threads must be >= 0 (0: min(4, hardware threads)), got {}",
                    o.decode_threads));
  }
  if (o.image_size == 0) o.image_size = kDefaultImageSize;
  if (o.decode_threads == 0) o.decode_threads = default_decode_threads();
  auto listing = list_image_folder(options.data_dir, split, o.held_out_fraction, o.split_seed);
  return std::make_shared<ImageFolderDataset>(std::move(listing), o, split);
}

std::shared_ptr<Dataset> open_image_folder_dataset(const DatasetOptions& options, Split split) {
  return open_image_folder(options, split);
}

}  // namespace tula::data
