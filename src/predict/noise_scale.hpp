// The gradient noise scale B_noise = tr(Sigma) / |G|^2 (McCandlish et al. 2018,
// "An Empirical Model of Large-Batch Training", arXiv 1812.06162), estimated
// for free during data-parallel training. Each step gives the squared norm of
// a gradient at two batch sizes: |g_b|^2 (a worker's own, batch b; the engine
// records the mean over workers) and |g_B|^2 (the allreduced one, B = N b).
// Since E|g_b|^2 = |G|^2 + tr(Sigma)/b, their appendix A.1 estimators
//   |G|^2  ~ (B |g_B|^2 - b |g_b|^2) / (B - b)
//   tr(S)  ~ (|g_b|^2 - |g_B|^2) / (1/b - 1/B)
// are unbiased; each is noisy per step, so both are averaged over steps (an
// exponential moving average of each, as they recommend, for the live trace;
// the plain mean over the run for the estimate) and only then divided.
#pragma once
#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "predict/profile.hpp"
#include "records/metrics_records.hpp"

namespace tula::predict {

struct NoiseOptions {
  double ema_decay = 0.95;     // weight of the past in the trace's moving averages
  int blocks = 10;             // contiguous blocks for the jackknife standard error
  // Leading share of each run's steps to drop. B_noise grows as the loss falls
  // (McCandlish et al. 2018, section 3), and what sets the steps to a target
  // is the noise scale on the way to it: a pilot stops at the target, so its
  // later half stands for that; its run mean is pulled down by the early,
  // low-noise steps (measured in docs/benchmarks/profiler-and-predictions.md, time to accuracy).
  double skip_fraction = 0.5;
};

struct NoiseEstimate {
  double b_noise = 0;   // ratio of the run-mean estimates
  double se = 0;        // delete-one-block jackknife standard error of b_noise
  int dof = 0;          // blocks - 1
  double g2 = 0;        // mean |G|^2 estimate
  double trace = 0;     // mean tr(Sigma) estimate
  double ema_b_noise = 0;  // the moving-average ratio at the last step
  int steps = 0;        // steps used
  // Where the read was taken, in minimum steps (the axis of S(B) = S_min (1 +
  // B_noise / B)): the mean over the steps used of each one's count since its
  // run began, every step counted as 1 / (1 + b_noise / B) (gaps in the step
  // numbers at the next sample's batch). Anchors the growth law
  // (noise_growth.hpp). 0: unknown (an estimate read from an older profile).
  double progress = 0;
  std::vector<std::string> notes;
};

struct NoiseTracePoint {
  int64_t step = 0;
  double g2_ema = 0, trace_ema = 0, b_noise_ema = 0;
};

// Per-step unbiased estimates; false when the step has no second batch size
// (one worker and no accumulation across workers: B == b).
bool step_estimates(const NoiseSample& s, double& g2, double& trace);

// Throws FitError when fewer than 4 steps have B > b, or when the mean |G|^2
// estimate is not positive (the noise swamps the signal at these batch sizes:
// B_noise is far larger than B and cannot be estimated from them).
NoiseEstimate estimate_noise_scale(const std::vector<NoiseSample>& samples, const NoiseOptions& opts = {});
std::vector<NoiseTracePoint> noise_scale_trace(const std::vector<NoiseSample>& samples, double ema_decay = 0.95);

// The sample of one step of the engine's metrics: local batch = global_batch /
// workers, or the noise probe's `probe_batch` on one worker. None for a
// skipped step, one worker without a probe (a single batch size says nothing
// of the noise) or a step without both squared norms.
std::optional<NoiseSample> noise_sample_of(const records::IterRecord& step);
std::vector<NoiseSample> noise_samples_of(const std::vector<records::MetricsRecord>& metrics);
// The same from a metrics stream (JSON lines); a malformed line throws
// ProfileError with its line number.
std::vector<NoiseSample> read_noise_samples(std::istream& metrics_jsonl);

nlohmann::json to_json(const NoiseEstimate& e);
NoiseEstimate noise_estimate_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
