// Profiles generated from known parameters plus noise, so tests can check that
// the fits recover what was put in, within the uncertainty they state. Shared
// by the predict and plan suites (header-only).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "predict/overlap_model.hpp"
#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::test {

// The "true" machine and model behind a synthetic profile: CPU-like numbers.
struct Truth {
  double a = 0.004, c = 0.0009;         // forward+backward: a + c b seconds
  double b_sat = 0;                     // > 0: flat until b_sat (GPU-like), t0 = a
  double t_opt = 0.002;                 // optimizer step
  double gamma = 0.0;                   // contention per extra worker on a node
  double alpha = 60e-6, bw = 1.0e9;     // ring latency per step, bandwidth bytes/s
  double p = 2.5;                       // overlap p-norm
  double m_static = 300e6, m_act = 6e6; // bytes, bytes per sample
  double e0 = 0.01, e1 = 0.0003;        // evaluation: e0 + e1 * samples per worker
  double b_noise = 600, s_min = 900;    // statistical model
  double noise = 0.02;                  // multiplicative timing noise (sd)
  int64_t gradient_bytes = 4 * 272474;  // resnet20's fp32 gradient
  // > 0: the engine's last bucket, recorded in the profile as two buckets;
  // 0: reckoned from the caps (what is left after the 1 MiB first one).
  int64_t last_bucket_bytes = 0;
  int64_t train = 60000, test = 10000;
  double memory_noise = 2e6;            // bytes, additive
};

inline double true_compute(const Truth& t, double b) {
  return t.b_sat > 0 ? t.a + t.c * std::max(0.0, b - t.b_sat) : t.a + t.c * b;
}
inline double true_ring(const Truth& t, double n, double bytes) {
  return n <= 1 ? 0.0 : 2 * (n - 1) * t.alpha + 2 * (n - 1) / n * bytes / t.bw;
}
// One step's compute and communication as the engine overlaps them: the
// p-norm of two buckets, with the last one never hidden.
inline double true_overlapped(const Truth& t, double n, double tc) {
  const double ta = 2 * 2 * (n - 1) * t.alpha + 2.0 * (n - 1) / n * static_cast<double>(t.gradient_bytes) / t.bw;
  const int64_t last_bytes = t.last_bucket_bytes > 0 ? t.last_bucket_bytes : t.gradient_bytes - (int64_t{1} << 20);
  const double last = true_ring(t, n, static_cast<double>(last_bytes));
  return n <= 1 ? tc : predict::OverlapModel::step(tc, ta, last, t.p);
}

struct SyntheticOptions {
  std::vector<int64_t> batches = {1, 2, 4, 8, 16, 32, 64, 128};
  int repeats = 5;
  bool contention = false;      // add samples at 2 workers per node
  bool overlap = true;
  bool overlap_steps = true;    // step_s (else only hidden_fraction)
  bool evaluation = true;
  bool gradient_noise = true;
  int noise_steps = 400;
  int noise_workers = 4;
  int64_t noise_local_batch = 32;
  std::vector<int64_t> pilot_batches = {256};
  int pilot_repeats = 2;
  double pilot_noise = 0.03;
};

// Per-worker gradients G + e_i with e_i ~ N(0, Sigma / b), Sigma isotropic in
// `dims` dimensions with trace tr; the engine's two norms per step.
inline std::vector<predict::NoiseSample> simulate_gradient_norms(double g2, double tr, int dims, int workers,
                                                                 int64_t local_batch, int steps, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  const double g = std::sqrt(g2 / dims), sd = std::sqrt(tr / dims / static_cast<double>(local_batch));
  std::vector<predict::NoiseSample> out;
  std::vector<double> sum(static_cast<size_t>(dims));
  for (int s = 0; s < steps; ++s) {
    std::fill(sum.begin(), sum.end(), 0.0);
    double local = 0;
    for (int w = 0; w < workers; ++w) {
      double sq = 0;
      for (int d = 0; d < dims; ++d) {
        const double v = g + sd * normal(rng);
        sq += v * v;
        sum[static_cast<size_t>(d)] += v;
      }
      local += sq / workers;
    }
    double global = 0;
    for (double v : sum) global += (v / workers) * (v / workers);
    predict::NoiseSample n;
    n.step = s + 1;
    n.local_batch = local_batch;
    n.global_batch = local_batch * workers;
    n.local_grad_sq = local;
    n.global_grad_sq = global;
    out.push_back(n);
  }
  return out;
}

inline predict::Profile make_profile(const Truth& t, uint64_t seed, const SyntheticOptions& o = {}) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  auto noisy = [&](double v) { return v * std::exp(t.noise * normal(rng)); };
  auto repeats = [&](double v) {
    std::vector<double> r;
    for (int i = 0; i < o.repeats; ++i) r.push_back(noisy(v));
    return r;
  };
  predict::Profile p;
  p.created = "2026-01-01T00:00:00Z";
  p.model = {"resnet20", t.gradient_bytes / 4, t.gradient_bytes, {}};
  if (t.last_bucket_bytes > 0) p.model.bucket_bytes = {t.gradient_bytes - t.last_bucket_bytes, t.last_bucket_bytes};
  p.data = {"fashion-mnist", t.train, t.test, {1, 28, 28}};
  p.hardware.cpu_model = "Synthetic CPU";
  p.hardware.cores = 4;
  p.hardware.device = {t.b_sat > 0 ? "cuda" : "cpu", t.b_sat > 0 ? "Synthetic GPU" : "", int64_t{8} << 30};
  p.hardware.hostname = "synthetic";
  p.hardware.math_library = "/usr/lib/synthetic/libblas.so.3";

  for (int64_t b : o.batches) {
    predict::ComputeSample c;
    c.batch_per_worker = b;
    c.forward_backward_s = repeats(true_compute(t, static_cast<double>(b)));
    c.optimizer_s = repeats(t.t_opt);
    p.compute.push_back(c);
    if (o.contention) {
      c.workers_per_node = 2;
      c.forward_backward_s = repeats(true_compute(t, static_cast<double>(b)) * (1 + t.gamma));
      c.optimizer_s.clear();
      p.compute.push_back(c);
    }
  }
  for (int64_t n : {2, 3, 4}) {
    for (int64_t bytes = 4096; bytes <= (int64_t{64} << 20); bytes *= 4) {
      p.allreduce.push_back({n, bytes, repeats(true_ring(t, static_cast<double>(n), static_cast<double>(bytes)))});
    }
  }
  for (int64_t b : o.batches) {
    const double bytes = t.m_static + t.m_act * static_cast<double>(b) + t.memory_noise * normal(rng);
    p.memory.push_back({b, static_cast<int64_t>(bytes)});
  }
  if (o.overlap) {
    const double buckets = 2;  // resnet20: 1 MiB first bucket, then the rest
    for (int64_t n : {2, 4}) {
      for (int64_t b : {8, 32, 128}) {
        const double tc = true_compute(t, static_cast<double>(b));
        const double ta = buckets * 2 * (n - 1) * t.alpha + 2.0 * (n - 1) / n * t.gradient_bytes / t.bw;
        const double step = true_overlapped(t, static_cast<double>(n), tc);
        predict::OverlapSample s;
        s.workers = n;
        s.batch_per_worker = b;
        s.hidden_fraction = std::clamp(1 - (step - tc) / ta, 0.0, 1.0);
        if (o.overlap_steps) s.step_s = repeats(step);
        p.overlap.push_back(s);
      }
    }
  }
  if (o.evaluation) {
    for (int64_t n : {1, 2, 4}) {
      p.evaluation.push_back({n, t.test, repeats(t.e0 + t.e1 * std::ceil(static_cast<double>(t.test) / n))});
    }
  }
  if (o.gradient_noise) {
    // |G|^2 = 1 and tr(Sigma) = B_noise.
    p.gradient_noise = simulate_gradient_norms(1.0, t.b_noise, 64, o.noise_workers, o.noise_local_batch, o.noise_steps,
                                               seed ^ 0x9e3779b97f4a7c15ULL);
  }
  if (!o.pilot_batches.empty()) {
    p.target_accuracy = 0.9;
    for (int64_t B : o.pilot_batches) {
      predict::PilotRun r;
      r.global_batch = B;
      for (int i = 0; i < o.pilot_repeats; ++i) {
        r.steps_to_target.push_back(t.s_min * (1 + t.b_noise / static_cast<double>(B)) *
                                    std::exp(o.pilot_noise * normal(rng)));
      }
      p.pilots.push_back(r);
    }
  }
  return p;
}

// A profile measured on `gpus` of the GPU `name` (80 GiB each), its step
// flat until the batch saturates the device at 64.
inline predict::Profile synthetic_gpu_profile(const std::string& name, int64_t gpus, uint64_t seed) {
  Truth t;
  t.b_sat = 64;
  t.a = 0.01;
  t.c = 0.0001;
  SyntheticOptions o;
  o.batches = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
  auto p = make_profile(t, seed, o);
  p.hardware.device = {"cuda", name, 80LL << 30, gpus};
  return p;
}

// Over many noisy profiles a fit's 95% intervals should cover the truth about
// 95% of the time. Draws `runs` profiles of `t` (seeds first_seed,
// first_seed + 1, ...; timings only), fits each with fit(profile), which
// returns the fitted parameters, and counts for each parameter named in
// `truth` the fits whose interval holds its true value.
template <class Fit>
std::map<std::string, int> interval_coverage(const Truth& t, int runs, uint64_t first_seed, Fit fit,
                                             const std::map<std::string, double>& truth) {
  SyntheticOptions timings_only;
  timings_only.gradient_noise = false;
  std::map<std::string, int> covered;
  for (int s = 0; s < runs; ++s) {
    const predict::ParamBlock params = fit(make_profile(t, first_seed + static_cast<uint64_t>(s), timings_only));
    for (const auto& [name, value] : truth) {
      const auto [lo, hi] = params.interval(name);
      covered[name] += lo <= value && value <= hi;
    }
  }
  return covered;
}

}  // namespace tula::test
