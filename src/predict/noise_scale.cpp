#include "predict/noise_scale.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "predict/error.hpp"
#include "records/metrics_file.hpp"
#include "records/record_error.hpp"

namespace tula::predict {

bool step_estimates(const NoiseSample& s, double& g2, double& trace) {
  const double b = static_cast<double>(s.local_batch), B = static_cast<double>(s.global_batch);
  if (!(B > b)) return false;
  g2 = (B * s.global_grad_sq - b * s.local_grad_sq) / (B - b);
  trace = (s.local_grad_sq - s.global_grad_sq) / (1 / b - 1 / B);
  return true;
}

namespace {

struct Step {
  double g2, trace;
};

// Each run's steps less its leading `skip_fraction` (pilot runs arrive one
// after another: a run starts where the step number stops growing).
std::vector<Step> usable_steps(const std::vector<NoiseSample>& samples, double skip_fraction) {
  std::vector<Step> steps;
  size_t begin = 0;
  for (size_t end = 1; end <= samples.size(); ++end) {
    if (end < samples.size() && samples[end].step > samples[end - 1].step) continue;
    const auto skip = static_cast<size_t>(std::floor(skip_fraction * static_cast<double>(end - begin)));
    for (size_t i = begin + skip; i < end; ++i) {
      Step s{};
      if (step_estimates(samples[i], s.g2, s.trace)) steps.push_back(s);
    }
    begin = end;
  }
  return steps;
}

// The mean over the steps usable_steps keeps of each one's minimum-step count
// since its run began, at B_noise `b_noise` (see NoiseEstimate::progress).
double read_progress(const std::vector<NoiseSample>& samples, double skip_fraction, double b_noise) {
  double sum = 0;
  int n = 0;
  size_t begin = 0;
  for (size_t end = 1; end <= samples.size(); ++end) {
    if (end < samples.size() && samples[end].step > samples[end - 1].step) continue;
    const auto skip = static_cast<size_t>(std::floor(skip_fraction * static_cast<double>(end - begin)));
    double count = 0;
    int64_t previous = 0;
    for (size_t i = begin; i < end; ++i) {
      const auto& s = samples[i];
      const double steps = static_cast<double>(std::max<int64_t>(1, s.step - previous));
      previous = s.step;
      count += steps / (1 + b_noise / static_cast<double>(s.global_batch));
      double g2 = 0, trace = 0;
      if (i >= begin + skip && step_estimates(s, g2, trace)) sum += count, ++n;
    }
    begin = end;
  }
  return n > 0 ? sum / n : 0.0;
}

}  // namespace

NoiseEstimate estimate_noise_scale(const std::vector<NoiseSample>& samples, const NoiseOptions& opts) {
  const auto steps = usable_steps(samples, opts.skip_fraction);
  if (steps.size() < 4) {
    throw FitError(fmt::format("samples.gradient_noise: {} steps with a global batch larger than the local one; at "
                               "least 4 are needed (the two-batch estimator needs 2 or more workers, or one with "
                               "--noise-probe-every)",
                               steps.size()));
  }
  const int n = static_cast<int>(steps.size());
  NoiseEstimate e;
  e.steps = n;
  double sum_g2 = 0, sum_tr = 0;
  for (const auto& s : steps) sum_g2 += s.g2, sum_tr += s.trace;
  e.g2 = sum_g2 / n;
  e.trace = sum_tr / n;
  if (!(e.g2 > 0)) {
    throw FitError(fmt::format("samples.gradient_noise: the mean |G|^2 estimate is {:g} (not positive): gradient "
                               "noise swamps the signal at these batch sizes, so B_noise is far above the global "
                               "batch and cannot be estimated; record more steps or use larger global batches",
                               e.g2));
  }
  if (!(e.trace > 0)) {
    throw FitError("samples.gradient_noise: the mean tr(Sigma) estimate is not positive (local and global "
                   "gradient norms agree): check that local_grad_sq is the per-worker norm");
  }
  e.b_noise = e.trace / e.g2;
  e.progress = read_progress(samples, opts.skip_fraction, e.b_noise);

  // Delete-one-block jackknife: contiguous blocks keep the steps' serial
  // correlation inside a block, so the error is not understated.
  const int k = std::min(opts.blocks, n);
  std::vector<double> pseudo;
  for (int blk = 0; blk < k; ++blk) {
    const int lo = blk * n / k, hi = (blk + 1) * n / k;
    double g = sum_g2, t = sum_tr;
    for (int i = lo; i < hi; ++i) g -= steps[static_cast<size_t>(i)].g2, t -= steps[static_cast<size_t>(i)].trace;
    if (g > 0) pseudo.push_back(t / g);
  }
  if (pseudo.size() >= 2) {
    double mean = 0;
    for (double v : pseudo) mean += v;
    mean /= static_cast<double>(pseudo.size());
    double ss = 0;
    for (double v : pseudo) ss += (v - mean) * (v - mean);
    const double kk = static_cast<double>(pseudo.size());
    e.se = std::sqrt((kk - 1) / kk * ss);
    e.dof = static_cast<int>(pseudo.size()) - 1;
  }
  if (static_cast<int>(pseudo.size()) < k) {
    e.notes.push_back("noise scale: some jackknife blocks left a non-positive |G|^2; the error is from the others");
  }
  const auto trace = noise_scale_trace(samples, opts.ema_decay);
  if (!trace.empty()) e.ema_b_noise = trace.back().b_noise_ema;
  e.notes.push_back(fmt::format("noise scale: B_noise = {:.3g} +- {:.3g} from {} steps (the later {:.3g}% of each "
                                "run: mean of the per-step unbiased estimates, then their ratio); the moving average "
                                "at the last step is {:.3g}",
                                e.b_noise, e.se, n, 100 * (1 - opts.skip_fraction), e.ema_b_noise));
  return e;
}

std::vector<NoiseTracePoint> noise_scale_trace(const std::vector<NoiseSample>& samples, double decay) {
  std::vector<NoiseTracePoint> out;
  double g = 0, t = 0, weight = 0;
  for (const auto& s : samples) {
    double g2 = 0, tr = 0;
    if (!step_estimates(s, g2, tr)) continue;
    g = decay * g + (1 - decay) * g2;
    t = decay * t + (1 - decay) * tr;
    weight = decay * weight + (1 - decay);  // bias correction, as Adam's, for the first steps
    NoiseTracePoint p;
    p.step = s.step;
    p.g2_ema = g / weight;
    p.trace_ema = t / weight;
    p.b_noise_ema = p.g2_ema > 0 ? p.trace_ema / p.g2_ema : std::numeric_limits<double>::infinity();
    out.push_back(p);
  }
  return out;
}

std::optional<NoiseSample> noise_sample_of(const records::IterRecord& step) {
  const bool probed = step.probe_batch > 0;
  if (step.skipped || (!probed && (step.workers < 2 || step.global_batch < step.workers))) return std::nullopt;
  if (!(step.local_grad_sq > 0) || !(step.global_grad_sq > 0)) return std::nullopt;
  NoiseSample s;
  s.step = step.step;
  s.global_batch = step.global_batch;
  s.local_batch = probed ? step.probe_batch : step.global_batch / step.workers;
  s.local_grad_sq = step.local_grad_sq;
  s.global_grad_sq = step.global_grad_sq;
  return s;
}

std::vector<NoiseSample> noise_samples_of(const std::vector<records::MetricsRecord>& metrics) {
  std::vector<NoiseSample> out;
  for (const auto& record : metrics) {
    if (const auto* step = std::get_if<records::IterRecord>(&record)) {
      if (auto sample = noise_sample_of(*step)) out.push_back(*sample);
    }
  }
  return out;
}

std::vector<NoiseSample> read_noise_samples(std::istream& in) {
  try {
    return noise_samples_of(records::read_metrics(in, "metrics"));
  } catch (const records::RecordError& e) {
    throw ProfileError(e.what());
  }
}

nlohmann::json to_json(const NoiseEstimate& e) {
  return {{"b_noise", e.b_noise}, {"se", e.se}, {"dof", e.dof}, {"g2", e.g2}, {"trace", e.trace},
          {"ema_b_noise", e.ema_b_noise}, {"steps", e.steps}, {"progress", e.progress}, {"notes", e.notes}};
}

NoiseEstimate noise_estimate_from_json(const nlohmann::json& j, const std::string& path) {
  NoiseEstimate e;
  try {
    e.b_noise = j.at("b_noise").get<double>();
    e.se = j.at("se").get<double>();
    e.dof = j.value("dof", 0);
    e.g2 = j.value("g2", 0.0);
    e.trace = j.value("trace", 0.0);
    e.ema_b_noise = j.value("ema_b_noise", 0.0);
    e.steps = j.value("steps", 0);
    e.progress = j.value("progress", 0.0);
    e.notes = j.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& ex) {
    throw ProfileError(path + ": " + ex.what());
  }
  if (!(e.b_noise > 0)) throw ProfileError(path + ".b_noise: must be positive");
  return e;
}

}  // namespace tula::predict
