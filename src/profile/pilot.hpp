// Statistical-efficiency inputs from `tula train --metrics` runs: each run's
// per-step gradient norms (the gradient-noise samples) and, when it reached
// the target accuracy, the optimizer steps it took (a pilot run). No LibTorch.
#pragma once
#include <string>
#include <vector>

#include "predict/profile.hpp"

namespace tula::profile {

struct PilotMetrics {
  std::vector<predict::NoiseSample> noise;
  std::vector<predict::PilotRun> pilots;  // one per global batch, repeats merged
  std::vector<std::string> notes;         // runs that never reached the target, and the like
};

// Reads each metrics file (JSON lines of `tula train --metrics`). A run counts
// as a pilot at its global batch (from its "start" record) with the step of
// the first epoch whose test accuracy reached `target_accuracy` (> 0).
// Throws predict::ProfileError naming the file and line.
PilotMetrics read_pilot_metrics(const std::vector<std::string>& paths, double target_accuracy);

}  // namespace tula::profile
