// Learning-rate schedules as pure functions of training progress, evaluated
// every step: gradual linear warmup (Goyal et al. 2017) followed by step decay
// or cosine annealing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tula::optim {

struct ScheduleOptions {
  std::string kind = "cosine";      // "constant", "step", "cosine"
  double base_lr = 0.1;             // the peak learning rate, reached after warmup
  double warmup_epochs = 0.0;       // linear from warmup_start_factor * base_lr
  double warmup_start_factor = 0.0;
  double total_epochs = 1.0;
  std::vector<double> milestones;   // step: epochs at which lr *= gamma (default 50%, 75%)
  double gamma = 0.1;
  double final_lr_factor = 0.0;     // cosine: lr at the end, as a share of base_lr
};

// Learning rate at fractional epoch `epoch` (step / steps_per_epoch).
double learning_rate(const ScheduleOptions& options, double epoch);

}  // namespace tula::optim
