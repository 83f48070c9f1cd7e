// Compute time of one worker's forward+backward pass as a function of its
// batch b, the optimizer step, and the slowdown when several workers share a
// node. Two shapes (docs/models.md, "Compute"):
//   linear      t_c(b) = a + c b                      (CPUs: work grows with b)
//   saturating  t_c(b) = t0 + c max(0, b - b_sat)     (GPUs: flat until the device is full)
// chosen by leave-one-out error on the profile's batch sizes.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

enum class ComputeShape { Linear, Saturating };
const char* to_string(ComputeShape s);

struct ComputeModel {
  ComputeShape shape = ComputeShape::Linear;
  // Linear: {"a", "c"}; saturating: {"t0", "c"}, conditional on b_sat (the
  // breakpoint is chosen by a grid search and not given an uncertainty).
  ParamBlock params;
  double b_sat = 0;
  double loo_linear = 0;      // leave-one-out relative RMS error of each shape
  double loo_saturating = -1; // -1: not tried (fewer than kMinSaturatingPoints batch sizes)
  ParamBlock optimizer;       // {"t_opt"}: seconds per optimizer step
  // Slowdown with k workers sharing a node, one parameter per worker count
  // the profile measured: {"gamma_k2", "gamma_k4", ...} at contention_at =
  // {2, 4, ...}, with t(k) = t(1) (1 + gamma_k (k - 1)). Between measured
  // counts the slowdown is interpolated linearly in k (from 1 at k = 1);
  // beyond the largest, its gamma is kept. Why one per count: on CPUs the
  // slowdown is not linear in k (a second worker halves each one's threads;
  // workers past the core count time-share them), and one straight line
  // through both regimes missed 2-worker steps by 20% and 4-worker steps by
  // 33% on resnet20 (docs/benchmarks/profiler-and-predictions.md). Empty contention_at: one gamma for
  // every k (none measured: gamma = 0; or an older profile's single fit).
  ParamBlock contention;
  std::vector<double> contention_at;
  bool contention_measured = false;
  std::vector<std::string> notes;  // fallbacks taken and assumptions made

  // Forward+backward seconds at batch b with parameters p0 (a or t0) and c.
  double forward_backward(double b, double p0, double c) const {
    return shape == ComputeShape::Linear ? p0 + c * b : p0 + c * (b > b_sat ? b - b_sat : 0.0);
  }
  double forward_backward(double b) const { return forward_backward(b, params.value(0), params.value(1)); }
  // Slowdown factor at k workers per node with the given gammas (the fitted
  // ones, or a draw of them): one per entry of contention_at.
  double contention_factor(double workers_per_node, std::span<const double> gammas) const;
  double contention_factor(double workers_per_node) const;  // at the fitted values
};

inline constexpr int kMinSaturatingPoints = 5;

// Throws FitError when fewer than kMinComputePoints distinct batch sizes were
// measured with one worker per node, or when time falls with the batch beyond
// its noise (a slope within two standard errors of zero falls back to a flat
// model, with a note).
ComputeModel fit_compute(const std::vector<ComputeSample>& samples);

nlohmann::json to_json(const ComputeModel& m);
ComputeModel compute_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
