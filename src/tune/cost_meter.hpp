// The money a tune job has spent: node-hours at the machine's price, accrued
// as job time passes. While workers train, the nodes they hold are billed;
// otherwise (profiling, planning, between launches) the one node the runner
// holds. No LibTorch here.
#pragma once

namespace tula::tune {

class CostMeter {
 public:
  // Resumes from what an earlier run of the job spent.
  explicit CostMeter(double spent = 0) : spent_(spent) {}

  // Starts the clock at job time `now` (nothing accrues before it).
  void start(double now) { accounted_at_ = now; }
  // Adds the time since the last call at `price_per_hour` for `nodes`, which
  // are what was held over that time.
  void accrue(double now, double price_per_hour, double nodes);

  double spent() const { return spent_; }

 private:
  double spent_ = 0;
  double accounted_at_ = -1;  // < 0: not started
};

}  // namespace tula::tune
