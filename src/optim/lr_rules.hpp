// How the learning rate follows the global batch:
//  * scaling rules from a reference batch B_ref at which the base rate was
//    tuned: linear (Goyal et al. 2017), square root (with LEGW, You et al.,
//    whose warmup epochs grow linearly with the batch), or none (AGS and the
//    layer-wise methods adapt the step themselves);
//  * batch schedules ("0:256,5:1024": from epoch 0 a global batch of 256, from
//    epoch 5 of 1024);
//  * smooth changes: when the global batch changes mid-run the rate moves from
//    the old batch's value to the new one's linearly over a window of steps
//    (Dynamic mini-batch SGD), instead of jumping.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "optim/schedule.hpp"

namespace tula::optim {

struct LrScaling {
  std::string rule = "none";  // none, linear, sqrt
  int64_t reference_batch = 128;
  bool legw = false;          // warmup epochs x (B / B_ref)
};

// Throws std::invalid_argument naming the problem.
void validate(const LrScaling& scaling);

// The schedule for global batch B: base rate scaled by the rule, warmup
// stretched under LEGW.
ScheduleOptions scaled_schedule(ScheduleOptions base, const LrScaling& scaling, int64_t global_batch);

// (first epoch, global batch) pairs in increasing epoch order.
class BatchSchedule {
 public:
  BatchSchedule() = default;
  // "epoch:batch[,epoch:batch...]"; throws std::invalid_argument on malformed
  // text, non-increasing epochs or non-positive batches.
  static BatchSchedule parse(const std::string& text);
  bool empty() const { return entries_.empty(); }
  // The global batch in force at `epoch`, or `fallback` before the first entry.
  int64_t global_batch_at(int64_t epoch, int64_t fallback) const;
  const std::vector<std::pair<int64_t, int64_t>>& entries() const { return entries_; }

 private:
  std::vector<std::pair<int64_t, int64_t>> entries_;
};

// The rate during a change of schedule that started at `start_step`: a
// straight line from the old schedule's rate to the new one's over `window`
// steps (window 0: the new rate at once).
struct LrTransition {
  ScheduleOptions from, to;
  int64_t start_step = 0;
  int64_t window = 0;
  double learning_rate(int64_t step, double epoch) const;
};

}  // namespace tula::optim
