// Compute time of one worker's forward+backward pass as a function of its
// batch b, the optimizer step, and the slowdown when several workers share a
// node. Two shapes (docs/models.md, "Compute"):
//   linear      t_c(b) = a + c b                      (CPUs: work grows with b)
//   saturating  t_c(b) = t0 + c max(0, b - b_sat)     (GPUs: flat until the device is full)
// chosen by leave-one-out error on the profile's batch sizes.
#pragma once
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
  ParamBlock contention;      // {"gamma"}: t(k workers on a node) = t(1) (1 + gamma (k - 1))
  bool contention_measured = false;
  std::vector<std::string> notes;  // fallbacks taken and assumptions made

  // Forward+backward seconds at batch b with parameters p0 (a or t0) and c.
  double forward_backward(double b, double p0, double c) const {
    return shape == ComputeShape::Linear ? p0 + c * b : p0 + c * (b > b_sat ? b - b_sat : 0.0);
  }
  double forward_backward(double b) const { return forward_backward(b, params.value(0), params.value(1)); }
  double contention_factor(double workers_per_node, double gamma) const { return 1 + gamma * (workers_per_node - 1); }
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
