// The service's job queue: at most N jobs run at once, each as a `tula tune`
// process (tune_process.hpp) through the server's backend; the rest wait in
// submission order. Every state change is stored (store.hpp) before it takes
// effect. The supervisor watches each running job's files for its phase,
// metrics and re-plans, publishes them as events, and when its process ends
// decides from the report: succeeded, failed, cancelled, or, for a process
// that was killed, resumed from its checkpoint.
//
// After a restart (even from SIGKILL) it re-adopts the tune processes that
// still run (their lock is held), resumes the jobs whose process died, and
// starts the queued ones: no job is lost, none runs twice.
// No LibTorch here.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "records/metrics_file.hpp"
#include "service/event_log.hpp"
#include "service/job_files.hpp"
#include "service/store.hpp"

namespace tula::service {

struct SupervisorOptions {
  std::string workdir;      // jobs/<id>/ (the tune directory), jobs/<id>.lock, jobs/<id>.log
  std::string tula_binary;  // runs `tula tune`
  std::string backend = "local";
  // Where a job's paths must lie: checked again just before each start (a
  // symlink may have changed since the submit), and handed to tune, which
  // checks them once more as it opens them.
  std::vector<std::string> data_roots;
  int max_running = 1;
  double poll_s = 0.5;          // how often running jobs are looked at
  double stop_grace_s = 120;    // a cancelled job's checkpoint-and-exit, before SIGKILL
  int max_resumes = 5;          // resumes after the tune process died (killed, crashed; clean
                                // checkpointed stops do not count), before the job fails
};

class Supervisor {
 public:
  Supervisor(Store& store, EventLog& events, ReportCache& reports, SupervisorOptions options);
  ~Supervisor();

  // Re-adopts or resumes what a previous server left, then runs the queue.
  void start();
  // Ends the queue. With stop_jobs, running jobs are asked to checkpoint and
  // exit (they resume at the next start) and this waits for them; without,
  // they go on running and the next start re-adopts them.
  void stop(bool stop_jobs);
  void wake();  // something was submitted or cancelled

  std::string job_dir(int64_t id) const;
  std::string log_path(int64_t id) const;
  int running_count();

 private:
  struct Running {
    pid_t pid = 0;      // the tune process (0: not known yet)
    bool own = false;   // our child (else re-adopted from an earlier server)
    int64_t attempt = 0;
    std::optional<int> exit_code;
    double term_sent_at = -1;
    std::unique_ptr<records::MetricsTail> metrics;
    size_t replans_seen = 0;
    int64_t progress_step = -1;
  };

  void run_loop();
  void recover();
  void tick();
  void start_queued();
  void start_job(const JobRecord& job, bool resume);
  void follow(int64_t id, Running& r);   // phase, metrics, re-plans, cancel
  void ended(int64_t id, Running& r);    // the process and its workers are gone
  void forget(int64_t id);               // drops the job's entry: it is settled
  bool following(int64_t id);            // the job has an entry
  Running& entry(int64_t id);            // the job's entry, made if missing
  bool move(int64_t id, records::JobState to, const std::string& reason);
  std::string lock_path(int64_t id) const;

  Store& store_;
  EventLog& events_;
  ReportCache& reports_;
  SupervisorOptions o_;
  std::map<int64_t, Running> running_;
  std::mutex mutex_;  // running_ (read by running_count)
  std::condition_variable wake_;
  bool woken_ = false;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace tula::service
