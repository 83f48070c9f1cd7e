#include "profile/compute_trials.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>
#include <torch/torch.h>

#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "predict/stats.hpp"
#include "profile/device.hpp"
#include "profile/memory_meter.hpp"

namespace tula::profile {
namespace {

using common::Clock;
using common::since;

// Bytes of a step at `batch`, extrapolated along the line through the two
// largest batches measured so far (memory grows linearly in the batch).
double extrapolate_memory(const std::vector<predict::MemorySample>& m, int64_t batch) {
  if (m.empty()) return 0;
  if (m.size() == 1) return static_cast<double>(m.back().bytes) * batch / std::max<int64_t>(1, m.back().batch);
  const auto& a = m[m.size() - 2];
  const auto& b = m.back();
  const double slope = static_cast<double>(b.bytes - a.bytes) / static_cast<double>(b.batch - a.batch);
  return static_cast<double>(b.bytes) + std::max(0.0, slope) * static_cast<double>(batch - b.batch);
}

std::string spread(const std::vector<double>& v) {
  auto s = v;
  std::sort(s.begin(), s.end());
  return fmt::format("{} [{}, {}]", common::format_seconds(predict::median(v)), common::format_seconds(s.front()),
                     common::format_seconds(s.back()));
}

}  // namespace

int64_t largest_fitting_batch(int64_t fits, int64_t fails, const std::function<bool(int64_t)>& fits_at,
                              double resolution) {
  if (fits < 1 || fails <= fits) throw std::invalid_argument("largest_fitting_batch: needs 1 <= fits < fails");
  while (fails - fits > 1 && static_cast<double>(fails - fits) > resolution * static_cast<double>(fits)) {
    const int64_t mid = fits + (fails - fits) / 2;
    (fits_at(mid) ? fits : fails) = mid;
  }
  return fits;
}

int64_t static_bytes(const TrialModel& model) {
  return model.weight_bytes() + model.gradient_buffer_bytes() + std::max<int64_t>(0, model.optimizer_state_bytes());
}

std::vector<int64_t> planned_batches(const ComputeTrialOptions& o, bool has_batch_norm) {
  if (!o.batches.empty()) return o.batches;
  const int64_t smallest = has_batch_norm ? 2 : 1;
  std::vector<int64_t> grid;
  for (double b = static_cast<double>(std::max(o.auto_first, smallest)); std::llround(b) <= o.auto_max; b *= o.auto_ratio) {
    const auto v = static_cast<int64_t>(std::llround(b));
    if (grid.empty() || v > grid.back()) grid.push_back(v);
  }
  return grid;
}

ComputeTrialResult run_compute_trials(TrialModel& model, const ModelTarget& target, const ComputeTrialOptions& o,
                                      const Log& log) {
  if (o.warmup < 0 || o.repeats < 1) throw std::invalid_argument("compute trials need warm-up >= 0 and repeats >= 1");
  const bool automatic = o.batches.empty();
  const int64_t smallest = model.has_batch_norm() ? 2 : 1;
  if (!automatic && *std::min_element(o.batches.begin(), o.batches.end()) < smallest) {
    throw std::invalid_argument("--batch-sizes: " + target.model + " has batch norm, which cannot train on one "
                                "sample per worker; start the sizes at 2");
  }
  const std::vector<int64_t> grid = planned_batches(o, model.has_batch_norm());
  ComputeTrialResult r;
  for (const int64_t b : grid) {
    if (o.stop_before && static_cast<int>(r.compute.size()) >= predict::kMinComputePoints) {
      const std::string why = o.stop_before(b);
      if (!why.empty()) {
        r.notes.push_back(fmt::format("batch {} and above not measured: {}", b, why));
        break;
      }
    }
    const double predicted = extrapolate_memory(r.memory, b);
    if (o.memory_limit_bytes > 0 && predicted > static_cast<double>(o.memory_limit_bytes)) {
      r.notes.push_back(fmt::format("batch {} and above not measured: a step would need about {}, over the memory "
                                    "limit of {}",
                                    b, common::format_bytes(predicted),
                                    common::format_bytes(static_cast<double>(o.memory_limit_bytes))));
      break;
    }
    const auto batch = synthetic_batch(target, b, o.seed + static_cast<uint64_t>(b));
    // A device out of memory: the cache is freed, the largest batch that
    // fits is found by trial below this one, and the grid ends here.
    // The first warm-up step (or the one that makes the optimizer state) is the probe.
    const bool probe = o.warmup > 0 || model.optimizer_state_bytes() < 0;
    try {
      if (probe) model.step(batch);
    } catch (const c10::OutOfMemoryError&) {
      release_cached_memory(model.device());
      r.out_of_memory_batch = b;
      const int64_t last = r.compute.empty() ? 0 : r.compute.back().batch_per_worker;
      const auto fits_at = [&](int64_t trial) {
        try {
          model.step(synthetic_batch(target, trial, o.seed + static_cast<uint64_t>(trial)));
          return true;
        } catch (const c10::OutOfMemoryError&) {
          release_cached_memory(model.device());
          return false;
        }
      };
      r.largest_fitting_batch = last > 0 ? largest_fitting_batch(last, b, fits_at, o.fit_resolution) : 0;
      r.notes.push_back(fmt::format("batch {} and above not measured: out of device memory at {} (the largest found "
                                    "to fit: {})",
                                    b, b, r.largest_fitting_batch));
      break;
    }
    for (int i = 1; i < o.warmup; ++i) model.step(batch);
    predict::ComputeSample sample;
    sample.batch_per_worker = b;
    sample.workers_per_node = 1;
    std::vector<std::vector<double>> ready;  // per bucket, one share per repeat
    for (int i = 0; i < o.repeats; ++i) {
      const auto t = model.step(batch);
      sample.forward_backward_s.push_back(t.forward_backward_s);
      sample.optimizer_s.push_back(t.optimizer_s);
      ready.resize(t.bucket_ready_fraction.size());
      for (size_t k = 0; k < ready.size(); ++k) ready[k].push_back(t.bucket_ready_fraction[k]);
    }
    // Each repeat's shares rise bucket by bucket, so their medians do too.
    for (const auto& shares : ready) sample.bucket_ready_fraction.push_back(predict::median(shares));

    // One more step under the meter; the inputs are made inside it so their
    // bytes count as per-sample memory, as the loader's batch does in training.
    int64_t live_after_forward = 0, step_peak = 0;
    {
      AllocationMeter meter;
      {
        const auto metered = synthetic_batch(target, b, o.seed + 7919 + static_cast<uint64_t>(b));
        live_after_forward = model.step(metered, &meter).live_after_forward_bytes;
      }
      step_peak = meter.peak_bytes();
      if (!meter.saw_allocations()) {
        throw std::runtime_error("memory trial: this LibTorch reported no allocations to the meter; "
                                 "memory cannot be measured");
      }
    }
    r.compute.push_back(sample);
    r.memory.push_back({b, static_bytes(model) + step_peak});
    r.memory_detail.push_back({{"batch", b},
                               {"live_after_forward_bytes", live_after_forward},
                               {"step_peak_bytes", step_peak},
                               {"static_bytes", static_bytes(model)}});
    const double step_s = predict::median(sample.forward_backward_s) + predict::median(sample.optimizer_s);
    if (log) {
      log(fmt::format("  batch {}: forward+backward {}, optimizer {}, memory {} (activations {}/sample)", b,
                      spread(sample.forward_backward_s), spread(sample.optimizer_s),
                      common::format_bytes(static_cast<double>(r.memory.back().bytes)),
                      common::format_bytes(static_cast<double>(live_after_forward) / static_cast<double>(b))));
    }
    const bool enough = static_cast<int>(r.compute.size()) >= predict::kMinComputePoints;
    if (automatic && enough && step_s > o.max_step_seconds && b != grid.back()) {
      r.notes.push_back(fmt::format("batch grid stopped after {}: a step took {}, over the {} per-step limit", b,
                                    common::format_seconds(step_s), common::format_seconds(o.max_step_seconds)));
      break;
    }
  }
  return r;
}

namespace {

std::vector<torch::Tensor> evaluation_inputs(const ModelTarget& target, const EvaluationTrialOptions& o, int64_t n) {
  std::vector<torch::Tensor> inputs;
  for (int64_t done = 0; done < n; done += o.eval_batch) {
    const int64_t b = std::min(o.eval_batch, n - done);
    inputs.push_back(synthetic_batch(target, b, o.seed + static_cast<uint64_t>(done)).images);
  }
  return inputs;
}

// The counts scaled so that `repeats` timed passes over each take about
// budget_s at `per_sample` seconds, their ratios kept.
std::vector<int64_t> counts_for_budget(const EvaluationTrialOptions& o, double per_sample) {
  double total = 0;
  for (const int64_t n : o.sample_counts) total += static_cast<double>(n);
  const double first = static_cast<double>(o.sample_counts.front());
  const double wanted = o.budget_s / (o.repeats * std::max(per_sample, 1e-9)) * first / total;
  const double scale = std::clamp(wanted, static_cast<double>(o.min_samples), static_cast<double>(o.max_samples)) / first;
  std::vector<int64_t> out;
  for (const int64_t n : o.sample_counts) out.push_back(std::max<int64_t>(1, std::llround(n * scale)));
  return out;
}

}  // namespace

std::vector<predict::EvaluationSample> run_evaluation_trials(TrialModel& model, const ModelTarget& target,
                                                             const EvaluationTrialOptions& o, const Log& log) {
  std::vector<predict::EvaluationSample> out;
  if (o.sample_counts.empty()) return out;
  auto counts = o.sample_counts;
  auto inputs = evaluation_inputs(target, o, counts.front());
  double warm_s = 0;
  for (int i = 0; i < o.warmup; ++i) {
    const auto t0 = Clock::now();
    model.evaluate(inputs);
    warm_s = since(t0);
  }
  if (o.budget_s > 0 && warm_s > 0) counts = counts_for_budget(o, warm_s / static_cast<double>(counts.front()));
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = counts[k];
    if (k > 0 || n != o.sample_counts.front()) inputs = evaluation_inputs(target, o, n);
    predict::EvaluationSample s;
    s.workers = 1;
    s.samples = n;
    for (int i = 0; i < o.repeats; ++i) {
      const auto t0 = Clock::now();
      model.evaluate(inputs);
      s.seconds.push_back(since(t0));
    }
    if (log) log(fmt::format("  {} samples: {}", n, spread(s.seconds)));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tula::profile
