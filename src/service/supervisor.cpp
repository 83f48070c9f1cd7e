#include "service/supervisor.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "common/process.hpp"
#include "common/text.hpp"
#include "records/metrics_file.hpp"
#include "records/states.hpp"
#include "records/tune_state.hpp"
#include "service/job_spec.hpp"
#include "service/tune_process.hpp"

namespace tula::service {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using common::unix_now;
using records::AttemptEnd;
using records::JobState;
using records::TuneOutcome;

// The words beside two attempt ends that need no more.
constexpr const char* kStoppedWithServer = "stopped with the server (resumes at its next start)";
constexpr const char* kNotStarted = "not started: its tune process was running already";

// At most `keep` of `items`, evenly spaced, the last always among them.
std::vector<json> thin(const std::vector<json>& items, size_t keep) {
  if (items.size() <= keep) return items;
  std::vector<json> out;
  for (size_t i = 0; i < keep; ++i) out.push_back(items[(i + 1) * items.size() / keep - 1]);
  return out;
}

}  // namespace

Supervisor::Supervisor(Store& store, EventLog& events, ReportCache& reports, SupervisorOptions options)
    : store_(store), events_(events), reports_(reports), o_(std::move(options)) {
  fs::create_directories(fs::path(o_.workdir) / "jobs");
}

Supervisor::~Supervisor() {
  if (thread_.joinable()) stop(false);
}

std::string Supervisor::job_dir(int64_t id) const {
  return (fs::path(o_.workdir) / "jobs" / std::to_string(id)).string();
}
std::string Supervisor::lock_path(int64_t id) const { return job_dir(id) + ".lock"; }
std::string Supervisor::log_path(int64_t id) const { return job_dir(id) + ".log"; }

int Supervisor::running_count() {
  std::lock_guard lock(mutex_);
  return static_cast<int>(running_.size());
}

void Supervisor::start() {
  recover();
  thread_ = std::thread([this] { run_loop(); });
}

void Supervisor::wake() {
  {
    std::lock_guard lock(mutex_);
    woken_ = true;
  }
  wake_.notify_all();
}

void Supervisor::run_loop() {
  while (!stopping_) {
    try {
      tick();
    } catch (const std::exception& e) {
      // The store may be locked or the disk full for a while; the jobs go on
      // and the next tick tries again.
      spdlog::error("supervisor: {}", e.what());
    }
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, std::chrono::duration<double>(o_.poll_s), [&] { return woken_ || stopping_; });
    woken_ = false;
  }
}

void Supervisor::stop(bool stop_jobs) {
  stopping_ = true;
  wake();
  if (thread_.joinable()) thread_.join();
  if (!stop_jobs) return;
  std::map<int64_t, Running> running;
  {
    std::lock_guard lock(mutex_);
    running.swap(running_);
  }
  for (auto& [id, r] : running) {
    if (r.pid > 0) ::kill(r.pid, SIGTERM);  // tune checkpoints and exits; the next start resumes it
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(o_.stop_grace_s);
  for (auto& [id, r] : running) {
    while (lock_holder(lock_path(id)) && std::chrono::steady_clock::now() < deadline) {
      if (r.own) reap_child(r.pid);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (lock_holder(lock_path(id)) && r.pid > 0) {
      spdlog::warn("job {}: no clean exit within {} s of SIGTERM; killing its processes", id, o_.stop_grace_s);
      signal_session(r.pid, SIGKILL);
    }
    if (r.own) reap_child(r.pid);
    try {
      if (r.attempt > 0) store_.end_attempt(r.attempt, AttemptEnd::StoppedWithServer, kStoppedWithServer);
    } catch (const std::exception& e) {
      // The next start settles the attempt from the job's report.
      spdlog::error("job {}: could not record its stop: {}", id, e.what());
    }
  }
}

bool Supervisor::move(int64_t id, JobState to, const std::string& reason) {
  if (!store_.transition(id, to, reason)) return false;
  events_.publish(id, "state", {{"state", records::to_string(to)}, {"reason", reason}});
  spdlog::info("job {}: {} ({})", id, records::to_string(to), reason);
  return true;
}

void Supervisor::recover() {
  for (const auto& job : store_.jobs_in({JobState::Profiling, JobState::Planning, JobState::Training})) {
    Running r;
    r.attempt = store_.latest_attempt(job.id).value_or(0);
    const auto holder = lock_holder(lock_path(job.id));
    r.pid = holder.value_or(0);
    if (holder) {
      const json attempts = store_.attempts(job.id);
      // The previous server died between the fork and recording the pid.
      if (!attempts.empty() && attempts.back()["pid"].is_null()) store_.set_attempt_pid(r.attempt, *holder);
      events_.publish(job.id, "state", {{"state", records::to_string(job.state)}, {"reason", "re-adopted by a restarted server"}});
      spdlog::info("job {}: its tune process (pid {}) still runs; re-adopted", job.id, *holder);
    }
    // A job whose process is gone is followed too: the first tick finds its
    // lock free and settles it from its report (or resumes it).
    std::lock_guard lock(mutex_);
    running_[job.id] = std::move(r);
  }
}

void Supervisor::tick() {
  std::vector<int64_t> ids;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, r] : running_) ids.push_back(id);
  }
  for (int64_t id : ids) {
    Running* r = nullptr;
    {
      std::lock_guard lock(mutex_);
      auto it = running_.find(id);
      if (it == running_.end()) continue;
      r = &it->second;  // only this thread adds or erases entries
    }
    if (r->own && !r->exit_code) r->exit_code = reap_child(r->pid);
    const auto holder = lock_holder(lock_path(id));
    if (holder && *holder > 0) r->pid = *holder;
    follow(id, *r);
    if (!holder) ended(id, *r);
  }
  start_queued();
}

void Supervisor::follow(int64_t id, Running& r) {
  const auto job = store_.job(id);
  if (!job) return;
  const std::string dir = job_dir(id);
  const auto phase = records::read_tune_phase(dir).value_or(records::TunePhase::New);
  const JobState to = records::job_state_of(phase);
  if (records::can_move(job->state, to)) move(id, to, "tune phase: " + std::string(records::to_string(phase)));

  if (!r.metrics) r.metrics = std::make_unique<records::MetricsTail>((fs::path(dir) / "metrics.jsonl").string());
  std::vector<json> steps, evaluations;
  for (const auto& rec : r.metrics->read_new()) {
    if (const auto* step = std::get_if<records::IterRecord>(&rec)) {
      steps.push_back({{"step", step->step}, {"loss", step->loss}, {"time", step->time}});
    } else if (const auto e = records::evaluation_of(rec)) {
      evaluations.push_back({{"type", records::record_type(rec)},
                             {"step", e->step},
                             {"test_accuracy", e->evaluation.test_accuracy},
                             {"test_loss", e->evaluation.test_loss},
                             {"time", e->time}});
    }
  }
  if (!steps.empty() || !evaluations.empty()) {
    events_.publish(id, "metrics", {{"steps", thin(steps, 20)}, {"evaluations", evaluations}});
  }

  if (const auto report = reports_.get(dir)) {
    const auto& replans = report->replans;
    for (; r.replans_seen < replans.size(); ++r.replans_seen) {
      events_.publish(id, "replan", records::to_json(replans[r.replans_seen]));
    }
    if (!report->timeline.empty() && report->timeline.back().step != r.progress_step) {
      const auto& last = report->timeline.back();
      r.progress_step = last.step;
      json progress = records::to_json(last);
      for (const char* k : {"workers", "b_noise", "test_accuracy", "target_min_steps", "forecast"}) progress.erase(k);
      events_.publish(id, "progress", progress);
    }
  }

  if (job->cancel_requested && r.pid > 0) {
    if (r.term_sent_at < 0) {
      ::kill(r.pid, SIGTERM);  // tune finishes the step, checkpoints, stops its workers, exits
      r.term_sent_at = unix_now();
      spdlog::info("job {}: cancelling (SIGTERM to tune pid {})", id, r.pid);
    } else if (unix_now() - r.term_sent_at > o_.stop_grace_s) {
      signal_session(r.pid, SIGKILL);
    }
  }
}

void Supervisor::ended(int64_t id, Running& r) {
  // Every store write comes before the job's entry is dropped, and each is
  // idempotent: if one throws (the store locked, the disk full), the entry
  // stays and the next tick settles the job again.
  const auto job = store_.job(id);
  if (!job) return forget(id);
  const std::string dir = job_dir(id);
  reports_.forget(dir);
  const auto report = reports_.get(dir);
  // No report, or one still saying "running": the process died before its end.
  const TuneOutcome state = report ? report->state : TuneOutcome::Running;
  const std::string reason = report ? report->reason : "";
  std::optional<int> exit = r.exit_code;
  if (report && report->exit_code) exit = report->exit_code;
  const AttemptEnd end = state == TuneOutcome::Running     ? AttemptEnd::EndedWithoutReport
                         : state == TuneOutcome::Succeeded ? AttemptEnd::Succeeded
                         : state == TuneOutcome::Stopped   ? AttemptEnd::Stopped
                                                           : AttemptEnd::Failed;
  std::string outcome =
      state == TuneOutcome::Running ? "ended without a final report" : std::string(records::to_string(state));
  if (exit) outcome += fmt::format(" (exit {})", *exit);
  if (r.attempt > 0) store_.end_attempt(r.attempt, end, outcome);

  if (state == TuneOutcome::Succeeded) {
    move(id, JobState::Succeeded, reason);
  } else if (job->cancel_requested) {
    move(id, JobState::Cancelled,
         "cancelled by request" + std::string(state == TuneOutcome::Stopped ? "; the checkpoint is kept" : ""));
  } else if (state == TuneOutcome::Failed || (state == TuneOutcome::Stopped && exit == 3)) {
    move(id, JobState::Failed, reason);
  } else if (!report && r.own && exit && *exit < 128) {
    // It exited by itself before writing a report: bad options or a broken install.
    move(id, JobState::Failed,
         fmt::format("tune exited with status {}: {}", *exit, common::last_line_of(log_path(id))));
  } else if (const int64_t times = store_.deaths(id); times > o_.max_resumes) {
    move(id, JobState::Failed,
         fmt::format("the tune process died {} times without finishing (last: {})", times, outcome));
  } else {
    // Killed (by a signal, by the machine) or stopped with a server: resume.
    // start_job replaces this entry.
    return start_job(*job, fs::exists(fs::path(dir) / "tune.json"));
  }
  forget(id);
}

void Supervisor::forget(int64_t id) {
  std::lock_guard lock(mutex_);
  running_.erase(id);
}

void Supervisor::start_queued() {
  for (const auto& job : store_.jobs_in({JobState::Queued})) {
    if (job.cancel_requested) {
      move(job.id, JobState::Cancelled, "cancelled by request before it started");
      continue;
    }
    if (running_count() >= o_.max_running || stopping_) break;
    if (following(job.id)) continue;  // its start is being retried
    start_job(job, false);
  }
}

bool Supervisor::following(int64_t id) {
  std::lock_guard lock(mutex_);
  return running_.contains(id);
}

Supervisor::Running& Supervisor::entry(int64_t id) {
  std::lock_guard lock(mutex_);
  return running_[id];  // std::map: the reference stays valid while the entry exists
}

void Supervisor::start_job(const JobRecord& job, bool resume) {
  const int64_t id = job.id;
  const std::string dir = job_dir(id);
  // The entry comes first: if a store write below throws, the next tick finds
  // no process holding the job's lock and settles the job again (ended()).
  Running& r = entry(id);
  r = Running{};
  if (job.state == JobState::Queued && !move(id, JobState::Profiling, "started")) return forget(id);
  r.attempt = store_.begin_attempt(id, resume);
  std::vector<std::string> argv = {o_.tula_binary, "tune"};
  if (resume) {
    for (const char* a : {"--resume", dir.c_str(), "--progress", "lines"}) argv.push_back(a);
    for (const auto& root : o_.data_roots) argv.insert(argv.end(), {"--data-root", root});
  } else {
    const auto args = tune_arguments(job.spec, dir, o_.backend, o_.data_roots);
    argv.insert(argv.end(), args.begin(), args.end());
  }
  try {
    recheck_spec_paths(job.spec, SpecRules{o_.data_roots, o_.backend});
    r.pid = start_tune_process(argv, lock_path(id), log_path(id), o_.workdir);
  } catch (const JobBusy&) {
    // Its process runs already (started by a server that died after starting it): follow that one.
    store_.end_attempt(r.attempt, AttemptEnd::NotStarted, kNotStarted);
    r.attempt = 0;
    r.pid = lock_holder(lock_path(id)).value_or(0);
    return;
  } catch (const std::exception& e) {
    store_.end_attempt(r.attempt, AttemptEnd::CouldNotStart, std::string("could not start: ") + e.what());
    move(id, JobState::Failed, e.what());
    return forget(id);
  }
  r.own = true;
  spdlog::info("job {}: tune pid {} ({})", id, r.pid, resume ? "resumed" : "started");
  if (resume) events_.publish(id, "state", {{"state", records::to_string(job.state)}, {"reason", "resumed from its checkpoint"}});
  try {
    store_.set_attempt_pid(r.attempt, r.pid);
  } catch (const std::exception& e) {
    // The process runs and is followed; the next server start records its pid.
    spdlog::error("job {}: could not record tune pid {}: {}", id, r.pid, e.what());
  }
}

}  // namespace tula::service
