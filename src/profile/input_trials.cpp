#include "profile/input_trials.hpp"

#include <algorithm>
#include <memory>
#include <optional>

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
                                  const InputTrialOptions& o, const Log& log) {
  auto set = data::open_dataset(train::dataset_options(data, model, 0, data::Split::kTrain), data::Split::kTrain);
  std::vector<std::shared_ptr<data::ImageFolderDataset>> decoding;
  if (auto folder = std::dynamic_pointer_cast<data::ImageFolderDataset>(set)) decoding.push_back(folder);
  const auto transforms = train::batch_transforms(data, model, *set, decoding);
  const int64_t batch = std::min(o.batch, set->size());

  InputTrialResult r;
  r.loader.batch = r.steps.batch = batch;
  r.loader.threads = decoding.empty() ? 1 : decoding.front()->decode_threads();
  r.loader_kind = decoding.empty() ? data.dataset + " in memory, prepared on one thread"
                                   : "image files decoded on " + std::to_string(r.loader.threads) +
                                         (r.loader.threads == 1 ? " thread" : " threads");

  // Alone: prepared in next() itself (no prefetch), so each call is one
  // batch's whole preparation and no queued batch shortens a timing.
  {
    BatchSource alone(set, transforms.train, batch, 0);
    alone.next();
    const auto start = Clock::now();
    for (int i = 0; i < o.loader_batches; ++i) {
      if (i >= 3 && since(start) > o.loader_seconds) break;
      const auto t = Clock::now();
      alone.next();
      r.loader.seconds.push_back(since(t));
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
  std::string line = "input at batch " + std::to_string(r.loader.batch) + ": the loader (" + r.loader_kind +
                     ") prepares a batch in " + format_seconds(r.batch_s) + " (" + format_number(rate, 4) +
                     " samples/s); fed by it a step takes " + format_seconds(r.step_s) + ", " +
                     format_seconds(r.compute_s) + " of it compute: ";
  const double waited = std::max(0.0, r.step_s - r.compute_s);
  if (r.batch_s > r.compute_s) {
    return line + "input-bound (the loader, not compute, bounds a step; more workers on these cores would not "
                  "feed it faster)";
  }
  return line + "compute-bound (" + format_number(r.step_s > 0 ? 100 * waited / r.step_s : 0, 3) +
         "% of the step waits for data)";
}

}  // namespace tula::profile
