#include "service/supervisor.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "service/job_spec.hpp"
#include "service/job_state.hpp"
#include "service/tune_process.hpp"

namespace tula::service {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// tune.json's phase as the service's state.
std::string state_of_phase(const std::string& phase) {
  if (phase.empty() || phase == "new") return "profiling";
  if (phase == "profiled") return "planning";
  return "training";  // planned, training, done (the end is decided when the process exits)
}

// Outcomes of attempts that ended cleanly: a checkpointed stop (SIGTERM, by the
// server's own stop or another's) and a start that found the job's process
// running already. The rest died (killed, crashed) and count against
// max_resumes.
constexpr const char* kStoppedWithServer = "stopped with the server (resumes at its next start)";
constexpr const char* kNotStarted = "not started: its tune process was running already";

bool died(const json& attempt) {
  if (!attempt["outcome"].is_string()) return false;  // still running
  const std::string outcome = attempt["outcome"];
  return !outcome.starts_with("stopped") && !outcome.starts_with("not started");
}

int64_t deaths(const json& attempts) {
  return std::count_if(attempts.begin(), attempts.end(), died);
}

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
      if (r.attempt > 0) store_.end_attempt(r.attempt, kStoppedWithServer);
    } catch (const std::exception& e) {
      // The next start settles the attempt from the job's report.
      spdlog::error("job {}: could not record its stop: {}", id, e.what());
    }
  }
}

bool Supervisor::move(int64_t id, const std::string& to, const std::string& reason) {
  if (!store_.transition(id, to, reason)) return false;
  events_.publish(id, "state", {{"state", to}, {"reason", reason}});
  spdlog::info("job {}: {} ({})", id, to, reason);
  return true;
}

void Supervisor::recover() {
  for (const auto& job : store_.jobs_in({"profiling", "planning", "training"})) {
    Running r;
    r.attempt = store_.latest_attempt(job.id).value_or(0);
    const auto holder = lock_holder(lock_path(job.id));
    r.pid = holder.value_or(0);
    if (holder) {
      const json attempts = store_.attempts(job.id);
      // The previous server died between the fork and recording the pid.
      if (!attempts.empty() && attempts.back()["pid"].is_null()) store_.set_attempt_pid(r.attempt, *holder);
      events_.publish(job.id, "state", {{"state", job.state}, {"reason", "re-adopted by a restarted server"}});
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
  const std::string phase = tune_phase(dir);
  const std::string to = state_of_phase(phase);
  if (can_move(job->state, to)) move(id, to, "tune phase: " + (phase.empty() ? std::string("profiling") : phase));

  if (!r.metrics) r.metrics = std::make_unique<LineTail>((fs::path(dir) / "metrics.jsonl").string());
  std::vector<json> steps, evaluations;
  for (auto& rec : r.metrics->read_new()) {
    const std::string type = rec.value("type", "");
    if (type == "iter") {
      steps.push_back({{"step", rec.value("step", 0)}, {"loss", rec.value("loss", 0.0)}, {"time", rec.value("time", 0.0)}});
    } else if (type == "eval" || type == "epoch") {
      evaluations.push_back({{"type", type},
                             {"step", rec.value("step", 0)},
                             {"test_accuracy", rec.value("test_accuracy", 0.0)},
                             {"test_loss", rec.value("test_loss", 0.0)},
                             {"time", rec.value("time", 0.0)}});
    }
  }
  if (!steps.empty() || !evaluations.empty()) {
    events_.publish(id, "metrics", {{"steps", thin(steps, 20)}, {"evaluations", evaluations}});
  }

  if (const auto report = reports_.get(dir)) {
    const json& replans = report->contains("replans") ? report->at("replans") : json::array();
    for (; r.replans_seen < replans.size(); ++r.replans_seen) events_.publish(id, "replan", replans[r.replans_seen]);
    const json& timeline = report->contains("timeline") ? report->at("timeline") : json::array();
    if (timeline.is_array() && !timeline.empty()) {
      const json& last = timeline.back();
      const int64_t step = last.value("step", int64_t{-1});
      if (step != r.progress_step) {
        r.progress_step = step;
        json progress = json::object();
        for (const char* k : {"step", "epoch", "t_s", "predicted_remaining_s", "predicted_total_s", "cost_so_far",
                              "global_batch", "iteration_s", "iteration_s_predicted"})
          if (last.contains(k)) progress[k] = last[k];
        events_.publish(id, "progress", progress);
      }
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
  const std::string state = report ? report->value("state", "") : "";
  const std::string reason = report ? report->value("reason", "") : "";
  std::optional<int> exit = r.exit_code;
  if (report && report->contains("exit_code") && report->at("exit_code").is_number_integer())
    exit = report->at("exit_code").get<int>();
  std::string outcome = state.empty() ? "ended without a report" : state;
  if (exit) outcome += " (exit " + std::to_string(*exit) + ")";
  if (r.attempt > 0) store_.end_attempt(r.attempt, outcome);

  if (state == "succeeded") {
    move(id, "succeeded", reason);
  } else if (job->cancel_requested) {
    move(id, "cancelled", "cancelled by request" + std::string(state == "stopped" ? "; the checkpoint is kept" : ""));
  } else if (state == "failed" || (state == "stopped" && exit == 3)) {
    move(id, "failed", reason);
  } else if (!report && r.own && exit && *exit < 128) {
    // It exited by itself before writing a report: bad options or a broken install.
    std::string last;
    std::ifstream log(log_path(id));
    for (std::string line; std::getline(log, line);)
      if (!line.empty()) last = line;
    move(id, "failed", "tune exited with status " + std::to_string(*exit) + ": " + last);
  } else if (const int64_t times = deaths(store_.attempts(id)); times > o_.max_resumes) {
    move(id, "failed", "the tune process died " + std::to_string(times) + " times without finishing (last: " +
                           outcome + ")");
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
  for (const auto& job : store_.jobs_in({"queued"})) {
    if (job.cancel_requested) {
      move(job.id, "cancelled", "cancelled by request before it started");
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
  if (job.state == "queued" && !move(id, "profiling", "started")) return forget(id);
  r.attempt = store_.begin_attempt(id, resume);
  std::vector<std::string> argv = {o_.tula_binary, "tune"};
  if (resume) {
    for (const char* a : {"--resume", dir.c_str(), "--progress", "lines"}) argv.push_back(a);
  } else {
    const auto args = tune_arguments(job.spec, dir, o_.backend);
    argv.insert(argv.end(), args.begin(), args.end());
  }
  try {
    r.pid = start_tune_process(argv, lock_path(id), log_path(id), o_.workdir);
  } catch (const JobBusy&) {
    // Its process runs already (started by a server that died after starting it): follow that one.
    store_.end_attempt(r.attempt, kNotStarted);
    r.attempt = 0;
    r.pid = lock_holder(lock_path(id)).value_or(0);
    return;
  } catch (const std::exception& e) {
    store_.end_attempt(r.attempt, std::string("could not start: ") + e.what());
    move(id, "failed", e.what());
    return forget(id);
  }
  r.own = true;
  spdlog::info("job {}: tune pid {} ({})", id, r.pid, resume ? "resumed" : "started");
  if (resume) events_.publish(id, "state", {{"state", job.state}, {"reason", "resumed from its checkpoint"}});
  try {
    store_.set_attempt_pid(r.attempt, r.pid);
  } catch (const std::exception& e) {
    // The process runs and is followed; the next server start records its pid.
    spdlog::error("job {}: could not record tune pid {}: {}", id, r.pid, e.what());
  }
}

}  // namespace tula::service
