// How the gradient noise scale grows over a run, and the B_noise a job meets
// over its whole progress. B_noise is smallest early (McCandlish et al. 2018,
// section 3: it grows as the loss falls), where a pilot measures it; a job
// that plans with that early read under-rates large batches.
//
// The law, on the axis of minimum steps s (progress: sum over steps of
// 1 / (1 + B_noise / B), the axis of S(B) = S_min (1 + B_noise / B)):
//   B_noise(s) = B0 (s / s0)^alpha,
// anchored at a read B0 taken at progress s0. Since the steps from s = a to
// s = b at global batch B are the integral of (1 + B_noise(s) / B) ds, a job
// meets the mean of B_noise over its progress:
//   mean over [a, b] = B0 / s0^alpha (b^(alpha+1) - a^(alpha+1)) / ((alpha+1) (b - a)).
// Progress is the one axis on which that mean does not depend on B, so the
// model keeps its form S(B) = S_min (1 + B_eff / B).
//
// The exponent and its held-out errors come from bench/noise_growth.py
// (docs/benchmarks/profiler-and-predictions.md, "B_noise along whole runs"). No LibTorch here.
#pragma once
#include <cstdint>
#include <vector>

#include "predict/profile.hpp"

namespace tula::predict {

struct NoiseGrowth {
  double exponent = 0;       // alpha; 0: B_noise is taken as read, no growth
  double exponent_se = 0;    // jackknife over the fit runs
  // Held-out |predicted / measured - 1| of the job-average B_noise up to the
  // target, predicted from each run's first window (the plan's use), and of
  // the rest of a run's average half way to its target (the re-fit's use).
  double plan_median_error = 0, plan_max_error = 0;
  double refit_median_error = 0, refit_max_error = 0;

  bool grows() const { return exponent != 0; }
};

// The law measured in docs/benchmarks/profiler-and-predictions.md: progress axis, fitted within runs on
// the fit runs (LeNet-5, Fashion-MNIST, global batch 1024-8192).
NoiseGrowth measured_noise_growth();

// A B_noise read and where it was taken, in minimum steps.
struct NoiseRead {
  double b_noise = 0;
  double progress = 0;
};

// B_noise at progress s under the law (the read itself without growth).
double grown_b_noise(const NoiseGrowth& growth, const NoiseRead& read, double progress);
// The mean of B_noise over progress [from, to]; the value at `from` when the
// range is empty. Throws std::invalid_argument for a read without a positive
// B_noise and progress (with growth) or a negative range start.
double mean_b_noise(const NoiseGrowth& growth, const NoiseRead& read, double from, double to);
// Minimum steps s with integral over [0, s] of B_noise = examples: the
// progress an unlimited batch makes on `examples` examples (E_min = S_min x
// mean B_noise, McCandlish's E_min = S_min B_noise when nothing grows).
double progress_for_examples(const NoiseGrowth& growth, const NoiseRead& read, double examples);
// Minimum steps s whose optimizer steps at global batch `batch`, each worth
// 1 / (1 + B_noise(s) / batch) of a minimum step as B_noise grows, number
// `steps`: s + (integral over [0, s] of B_noise) / batch = steps (bisection).
double progress_for_steps(const NoiseGrowth& growth, const NoiseRead& read, double steps, double batch);

// B_noise in windows of consecutive steps at one global batch, as
// bench/noise_growth.py cuts a run: the ratio of the window means of the
// unbiased |G|^2 and tr(Sigma) estimates, placed at the window's mean
// progress (each window counted at its own B_noise). A window whose mean
// |G|^2 (or tr(Sigma)) is not positive has no B_noise (b_noise 0) and counts
// its steps at the last window's.
struct NoiseWindow {
  int64_t steps = 0;
  int64_t global_batch = 0;
  double mean_step = 0;
  double g2 = 0, trace = 0;
  double b_noise = 0;   // 0: the window's mean |G|^2 or tr(Sigma) is not positive
  double progress = 0;  // minimum steps at the window's centre
};

// `window_steps` consecutive samples per window within each stretch at one
// global batch (an epoch's short last step stays in its stretch); the rest of
// a stretch joins its last window; a stretch shorter than one window is one
// window when it has at least 8 steps.
std::vector<NoiseWindow> noise_windows(const std::vector<NoiseSample>& samples, int64_t window_steps);

struct GrowthFit {
  double exponent = 0;
  double se = 0;  // least-squares standard error of the slope
  int windows = 0;
};

// One run's exponent: weighted least squares of log B_noise on log progress
// over its windows with a B_noise (weights: their steps, normalised to mean
// 1). Throws FitError with fewer than 3 such windows.
GrowthFit fit_noise_growth(const std::vector<NoiseWindow>& windows);

}  // namespace tula::predict
