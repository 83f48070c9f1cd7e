#include "profile/input_trials.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "data/image_folder.hpp"
#include "data/loader.hpp"
#include "data/sampler.hpp"
#include "predict/stats.hpp"
#include "train/data_sets.hpp"

namespace tula::profile {
namespace {

using common::Clock;
using common::since;

// Batches in training's order, epoch after epoch, from loaders made as
// `tula train` makes them (one rank, seed 0).
class BatchSource {
 public:
  BatchSource(std::shared_ptr<const data::Dataset> set, const data::TransformOptions& transform, int64_t batch,
              int64_t prefetch)
      : set_(std::move(set)), transform_(transform), batch_(batch), prefetch_(prefetch) {
    data::SamplerOptions s;
    s.dataset_size = set_->size();
    sampler_ = std::make_unique<data::DistributedSampler>(s);
    open();
  }

  data::Batch next() {
    auto b = loader_->next();
    if (!b) {
      ++epoch_;
      open();
      b = loader_->next();
    }
    if (!b) throw std::runtime_error("the input trial's loader yielded no batch");
    return std::move(*b);
  }

 private:
  void open() {
    data::LoaderOptions lo;
    lo.batch_size = batch_;
    lo.prefetch = prefetch_;
    lo.seed = static_cast<uint64_t>(epoch_);
    lo.transform = transform_;
    loader_.reset();  // joins the old loader's thread before a new one starts
    loader_ = std::make_unique<data::PrefetchLoader>(set_, sampler_->indices(epoch_), lo);
  }

  std::shared_ptr<const data::Dataset> set_;
  data::TransformOptions transform_;
  int64_t batch_, prefetch_;
  int64_t epoch_ = 0;
  std::unique_ptr<data::DistributedSampler> sampler_;
  std::unique_ptr<data::PrefetchLoader> loader_;
};

}  // namespace

InputTrialResult run_input_trials(const train::DataOptions& data, const std::string& model, TrialModel& trial,
                                  const InputTrialOptions& o, const Log& log, std::shared_ptr<data::Dataset> opened) {
  auto set = opened ? std::move(opened)
                    : data::open_dataset(train::dataset_options(data, model, 0, data::Split::kTrain), data::Split::kTrain);
  std::vector<std::shared_ptr<data::ImageFolderDataset>> decoding;
  if (auto folder = std::dynamic_pointer_cast<data::ImageFolderDataset>(set)) decoding.push_back(folder);
  const auto transforms = train::batch_transforms(data, model, *set, decoding);
  const int64_t batch = std::min(o.batch, set->size());

  InputTrialResult r;
  r.loader.batch = r.steps.batch = batch;
  r.loader.threads = decoding.empty() ? 1 : decoding.front()->decode_threads();
  r.loader_kind = decoding.empty() ? data.dataset + " in memory, prepared on one thread"
                                   : fmt::format("image files decoded on {} {}", r.loader.threads,
                                                 r.loader.threads == 1 ? "thread" : "threads");

  // Alone: as training runs it (its own producer thread, at idle priority,
  // with training's prefetch), drawn with nothing in between; once the
  // batches it prepared before the first draw are used up, the time between
  // draws is the time it takes to prepare one.
  {
    BatchSource alone(set, transforms.train, batch, data.prefetch);
    for (int64_t i = 0; i <= data.prefetch; ++i) alone.next();
    const auto start = Clock::now();
    for (int i = 0;; ++i) {
      const double spent = since(start);
      if (spent > o.loader_max_seconds && i >= 3) break;
      if (i >= o.loader_batches && spent > o.loader_seconds) break;
      const auto t = Clock::now();
      alone.next();
      r.loader.seconds.push_back(since(t));
    }
  }
  if (!decoding.empty()) {
    // The same batches once more through a cache with no limit: what one
    // decoded image holds (a JPEG at the DCT scale the cache keeps, a PNG whole).
    auto cached = data;
    cached.cache_decoded = true;
    auto options = train::dataset_options(cached, model, 0, data::Split::kTrain);
    options.image_folder.cache_budget_bytes = std::numeric_limits<int64_t>::max() / 2;
    auto set_with_cache = std::dynamic_pointer_cast<data::ImageFolderDataset>(
        data::open_dataset(options, data::Split::kTrain));
    if (set_with_cache) {
      BatchSource through_cache(set_with_cache, transforms.train, batch, 0);
      const int64_t batches = std::max<int64_t>(1, std::min<int64_t>(3, set_with_cache->size() / batch));
      for (int64_t i = 0; i < batches; ++i) through_cache.next();
      r.decoded_bytes_per_sample =
          static_cast<double>(set_with_cache->cached_bytes()) / static_cast<double>(batches * batch);
    }
  }
  // Feeding steps, with training's prefetch: the wait for the batch and the step.
  {
    BatchSource fed(set, transforms.train, batch, data.prefetch);
    const int64_t warmup = data.prefetch + 1;
    for (int64_t i = 0; i < warmup + o.steps; ++i) {
      const auto t = Clock::now();
      const auto b = fed.next();
      const auto times = trial.step(b);
      if (i < warmup) continue;
      r.steps.step_s.push_back(since(t));
      r.steps.compute_s.push_back(times.forward_backward_s + times.optimizer_s);
    }
  }
  r.batch_s = predict::median(r.loader.seconds);
  r.compute_s = predict::median(r.steps.compute_s);
  r.step_s = predict::median(r.steps.step_s);
  if (log) log("  " + describe_input(r));
  return r;
}

std::string describe_input(const InputTrialResult& r) {
  using common::format_number;
  using common::format_seconds;
  const double rate = r.batch_s > 0 ? static_cast<double>(r.loader.batch) / r.batch_s : 0;
  std::string line = fmt::format("input at batch {}: the loader ({}) prepares a batch in {} ({} samples/s); fed by it "
                                 "a step takes {}, {} of it compute: ",
                                 r.loader.batch, r.loader_kind, format_seconds(r.batch_s), format_number(rate, 4),
                                 format_seconds(r.step_s), format_seconds(r.compute_s));
  const double waited = std::max(0.0, r.step_s - r.compute_s);
  if (r.batch_s > r.compute_s) {
    return line + "input-bound (the loader, not compute, bounds a step; more workers on these cores would not "
                  "feed it faster)";
  }
  return line + fmt::format("compute-bound ({}% of the step waits for data)",
                            format_number(r.step_s > 0 ? 100 * waited / r.step_s : 0, 3));
}

std::string describe_cache_fit(double bytes_per_sample, int64_t train_samples, double training_bytes,
                               int64_t memory_bytes, int64_t cores) {
  using common::format_bytes;
  const double set = bytes_per_sample * static_cast<double>(train_samples);
  const double memory = static_cast<double>(memory_bytes);
  std::string line = fmt::format("--cache-decoded: the {} training images take {} decoded ({} each) in every worker "
                                 "that caches them, beside {} of training; ",
                                 train_samples, format_bytes(set), format_bytes(bytes_per_sample),
                                 format_bytes(training_bytes));
  int64_t fit = 0;
  for (int64_t w = 1; w <= std::max<int64_t>(1, cores); ++w) {
    if (static_cast<double>(w) * (set + training_bytes) <= memory) fit = w;
  }
  if (fit == 0) return line + "not even one worker's copy fits this machine's " + format_bytes(memory);
  return line + fmt::format("the copies of {} {} this machine's {}", fit, fit == 1 ? "worker fit" : "workers fit",
                            format_bytes(memory));
}

}  // namespace tula::profile
