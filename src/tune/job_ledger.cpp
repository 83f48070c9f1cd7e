#include "tune/job_ledger.hpp"

#include <algorithm>

namespace tula::tune {

JobLedger JobLedger::resumed(const records::TuneState& s, double unix_now) {
  JobLedger l;
  l.origin_unix_ = s.origin_unix;
  l.pauses_ = s.pauses;
  l.pauses_.push_back({unix_now, l.job_time(unix_now) - s.elapsed_s});
  l.profile_s_ = s.profile_s;
  l.pilot_s_ = s.pilot_s;
  l.train_s_ = s.train_s;
  l.restart_s_ = s.restart_s;
  l.queue_s_ = s.queue_s;
  l.cost_ = CostMeter(s.spent);
  l.retries_ = s.retries;
  l.launches_ = s.launches;
  l.restart_cost_s_ = s.restart_cost_s;
  return l;
}

void JobLedger::save(records::TuneState& s, double unix_now) const {
  s.origin_unix = origin_unix_;
  s.pauses = pauses_;
  s.elapsed_s = job_time(unix_now);
  s.profile_s = profile_s_;
  s.pilot_s = pilot_s_;
  s.train_s = train_s_;
  s.restart_s = restart_s_;
  s.queue_s = queue_s_;
  s.spent = cost_.spent();
  s.retries = retries_;
  s.launches = launches_;
  s.restart_cost_s = restart_cost_s_;
}

double JobLedger::job_time(double unix_seconds) const {
  double t = unix_seconds - origin_unix_;
  for (const auto& p : pauses_) {
    if (unix_seconds >= p.resumed_unix) t -= p.seconds;
  }
  return t;
}

double JobLedger::measure_start_up(double requested_at, double first_step_started, double queued_s) {
  const double queued = std::max(0.0, queued_s);
  queue_s_ += queued;
  const double seconds = std::max(0.0, first_step_started - requested_at - queued);
  restart_cost_s_ = seconds;  // the latest start on this machine is the best guess of the next restart's
  if (launches_ == 1) return queued;  // the job's first workers start once whatever it decides: not a restart
  ++restarts_measured_;
  restart_s_ += seconds;
  return queued + seconds;
}

records::ReportPhases JobLedger::phases(double total_s) const {
  records::ReportPhases p{profile_s_, pilot_s_, train_s_, restart_s_, total_s,
                          total_s > 0 ? (profile_s_ + pilot_s_) / total_s : 0.0};
  p.queue_s = queue_s_;
  return p;
}

}  // namespace tula::tune
