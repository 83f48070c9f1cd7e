#include "optim/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tula::optim {

double learning_rate(const ScheduleOptions& o, double epoch) {
  if (o.warmup_epochs > 0 && epoch < o.warmup_epochs) {
    const double t = epoch / o.warmup_epochs;
    return o.base_lr * (o.warmup_start_factor + (1.0 - o.warmup_start_factor) * t);
  }
  if (o.kind == "constant") return o.base_lr;
  if (o.kind == "step") {
    std::vector<double> milestones = o.milestones;
    if (milestones.empty()) milestones = {0.5 * o.total_epochs, 0.75 * o.total_epochs};
    double lr = o.base_lr;
    for (double m : milestones) {
      if (epoch >= m) lr *= o.gamma;
    }
    return lr;
  }
  if (o.kind == "cosine") {
    // Annealed over the epochs after warmup, so warmup does not shorten it.
    const double span = std::max(1e-12, o.total_epochs - o.warmup_epochs);
    const double t = std::clamp((epoch - o.warmup_epochs) / span, 0.0, 1.0);
    const double floor = o.final_lr_factor * o.base_lr;
    return floor + (o.base_lr - floor) * 0.5 * (1.0 + std::cos(M_PI * t));
  }
  throw std::invalid_argument("unknown learning-rate schedule '" + o.kind + "' (constant, step, cosine)");
}

}  // namespace tula::optim
