// The job's clock and bill: job time (wall time less the stretches it was
// stopped), the seconds each phase took, the money spent, and the launches,
// restarts and retries it paid. tune.json keeps it across a stop and a
// --resume. No LibTorch here.
#pragma once
#include <vector>

#include "records/tune_report.hpp"
#include "records/tune_state.hpp"
#include "tune/cost_meter.hpp"
#include "tune/watch.hpp"

namespace tula::tune {

class JobLedger {
 public:
  // A new job: job time 0 is `origin_unix`; `restart_cost_s` is the option's
  // guess of a restart until one is measured.
  JobLedger(double origin_unix, double restart_cost_s) : origin_unix_(origin_unix), restart_cost_s_(restart_cost_s) {}
  // A job read back from its tune.json at `unix_now`: the time since it was
  // written is a pause, not the job's.
  static JobLedger resumed(const records::TuneState& state, double unix_now);
  // Its fields of tune.json.
  void save(records::TuneState& state, double unix_now) const;

  double job_time(double unix_seconds) const;
  double origin_unix() const { return origin_unix_; }

  // The bill starts at job time `now` (nothing accrues before it).
  void start_billing(double now) { cost_.start(now); }
  // The time since the last call at `price_per_hour` for `nodes`, held over it.
  void accrue(double now, double price_per_hour, double nodes) { cost_.accrue(now, price_per_hour, nodes); }
  double spent() const { return cost_.spent(); }
  // What a decision at job time `now` weighs: the money so far and the next restart's seconds.
  JobClock clock(double now) const { return {now, cost_.spent(), restart_cost_s_}; }
  double restart_cost_s() const { return restart_cost_s_; }

  // A launch asked for; returns its number (1 for the job's first).
  int count_launch() { return ++launches_; }
  int launches() const { return launches_; }
  // A launch's start-up: from asking for workers (`requested_at`) to its first
  // step's start (`first_step_started`), both in job time, less the
  // `queued_s` it waited in the backend's queue for its nodes (the queue's
  // phase: a busy cluster's, not the start-up's). The start-up is the next
  // restart's estimate; for any launch after the job's first it is a restart.
  // Returns the seconds that are neither the pilot's nor the training's:
  // the queue wait, and the start-up where it is a restart.
  double measure_start_up(double requested_at, double first_step_started, double queued_s = 0);
  // A failed launch retried; returns the retries so far.
  int count_retry() { return ++retries_; }
  int retries() const { return retries_; }

  void add_profile_s(double s) { profile_s_ += s; }
  void add_pilot_s(double s) { pilot_s_ += s; }
  void add_train_s(double s) { train_s_ += s; }
  // The phases' seconds with the job's `total_s` so far.
  records::ReportPhases phases(double total_s) const;
  // The report's counts: restarts measured and retries.
  int restarts_measured() const { return restarts_measured_; }

 private:
  JobLedger() = default;

  double origin_unix_ = 0;  // job time 0
  std::vector<records::Pause> pauses_;
  double profile_s_ = 0, pilot_s_ = 0, train_s_ = 0, restart_s_ = 0, queue_s_ = 0;
  CostMeter cost_;
  double restart_cost_s_ = 0;  // the latest measured start-up (or the option's guess)
  int restarts_measured_ = 0;
  int retries_ = 0, launches_ = 0;
};

}  // namespace tula::tune
