// Memory of one worker: weights, gradients and optimizer state do not depend
// on the batch; activations saved for backward grow linearly with it (the
// Tula paper's Fig. 4), so
//   M(b) = M_static + m_act b.
// The largest batch that fits a device uses the upper 95% prediction bound of
// M(b), not the fit's mean, so a predicted fit is one a run would survive.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

struct MemoryModel {
  ParamBlock params;  // {"m_static": bytes, "m_act": bytes per sample}
  std::vector<std::string> notes;

  double bytes(double b) const { return params.value(0) + params.value(1) * b; }
  // Upper bound at `level` (one-sided) of one run's peak at batch b: fit
  // uncertainty plus the residual scatter of single measurements.
  double upper_bytes(double b, double level = 0.975) const;
  // Largest b whose upper bound fits `capacity` bytes; 0 when not even b = 1 fits.
  int64_t max_batch(double capacity_bytes, double level = 0.975) const;
};

// Per-worker micro-batch and accumulation steps that process `batch` samples
// per worker per optimizer step without exceeding `max_batch`: the fewest
// accumulation steps, then the micro-batch ceil(batch / steps).
struct AccumulationPlan {
  int64_t micro_batch = 0;
  int64_t steps = 1;
};
// Throws InfeasibleError when max_batch < 1 (nothing fits the device).
AccumulationPlan split_for_memory(int64_t batch, int64_t max_batch, const std::string& device);

// Unweighted least squares (memory noise is allocator granularity, additive).
// Throws FitError when memory falls as the batch grows beyond its noise; a
// slope within two standard errors of zero is held at zero, with a note.
MemoryModel fit_memory(const std::vector<MemorySample>& samples);

nlohmann::json to_json(const MemoryModel& m);
MemoryModel memory_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
