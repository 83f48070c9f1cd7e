#include "train/resume_position.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tula::train {

int64_t resumed_step_in_epoch(int64_t stopped_at, int64_t was_batch, int64_t now_batch, int64_t steps_now) {
  if (was_batch <= 0 || now_batch <= 0 || stopped_at < 0 || steps_now <= 0) {
    throw std::invalid_argument("resume position: step " + std::to_string(stopped_at) + " at batch " +
                                std::to_string(was_batch) + " -> batch " + std::to_string(now_batch) + " with " +
                                std::to_string(steps_now) + " steps an epoch");
  }
  return std::min(stopped_at * was_batch / now_batch, steps_now);
}

}  // namespace tula::train
