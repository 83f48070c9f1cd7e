#include "service/supervisor.hpp"

#include <signal.h>
#include <spdlog/spdlog.h>

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
    store_.end_attempt(r.attempt, "stopped with the server (resumes at its next start)");
  }
}

bool Supervisor::move(int64_t id, const std::string& to, const std::string& reason) {
  if (!store_.transition(id, to, reason)) return false;
  events_.publish(id, "state", {{"state", to}, {"reason", reason}});
  spdlog::info("job {}: {} ({})", id, to, reason);
  return true;
}

void Supervisor::recover() {
  std::vector<std::pair<int64_t, Running>> gone;
  for (const auto& job : store_.jobs_in({"profiling", "planning", "training"})) {
    Running r;
    r.attempt = store_.latest_attempt(job.id).value_or(0);
    const auto holder = lock_holder(lock_path(job.id));
    if (!holder) {
      gone.emplace_back(job.id, std::move(r));
      continue;
    }
    r.pid = *holder;
    {
      std::lock_guard lock(mutex_);
      running_[job.id] = std::move(r);
    }
    events_.publish(job.id, "state", {{"state", job.state}, {"reason", "re-adopted by a restarted server"}});
    spdlog::info("job {}: its tune process (pid {}) still runs; re-adopted", job.id, *holder);
  }
  // Their process is gone: settled by what its report says (or resumed).
  for (auto& [id, r] : gone) ended(id, r);
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
  Running done = std::move(r);
  {
    std::lock_guard lock(mutex_);
    running_.erase(id);
  }
  const auto job = store_.job(id);
  if (!job) return;
  const std::string dir = job_dir(id);
  reports_.forget(dir);
  const auto report = reports_.get(dir);
  const std::string state = report ? report->value("state", "") : "";
  const std::string reason = report ? report->value("reason", "") : "";
  std::optional<int> exit = done.exit_code;
  if (report && report->contains("exit_code") && report->at("exit_code").is_number_integer())
    exit = report->at("exit_code").get<int>();
  std::string outcome = state.empty() ? "ended without a report" : state;
  if (exit) outcome += " (exit " + std::to_string(*exit) + ")";
  if (done.attempt > 0) store_.end_attempt(done.attempt, outcome);

  if (state == "succeeded") {
    move(id, "succeeded", reason);
  } else if (job->cancel_requested) {
    move(id, "cancelled", "cancelled by request" + std::string(state == "stopped" ? "; the checkpoint is kept" : ""));
  } else if (state == "failed" || (state == "stopped" && exit == 3)) {
    move(id, "failed", reason);
  } else if (!report && done.own && exit && *exit < 128) {
    // It exited by itself before writing a report: bad options or a broken install.
    std::string last;
    std::ifstream log(log_path(id));
    for (std::string line; std::getline(log, line);)
      if (!line.empty()) last = line;
    move(id, "failed", "tune exited with status " + std::to_string(*exit) + ": " + last);
  } else if (job->attempts > o_.max_resumes) {
    move(id, "failed", "the tune process ended " + std::to_string(job->attempts) + " times without finishing (last: " +
                           outcome + ")");
  } else {
    // Killed (by a signal, by the machine) or stopped with a server: resume.
    start_job(*job, fs::exists(fs::path(dir) / "tune.json"));
  }
}

void Supervisor::start_queued() {
  for (const auto& job : store_.jobs_in({"queued"})) {
    if (job.cancel_requested) {
      move(job.id, "cancelled", "cancelled by request before it started");
      continue;
    }
    if (running_count() >= o_.max_running || stopping_) break;
    start_job(job, false);
  }
}

void Supervisor::start_job(const JobRecord& job, bool resume) {
  const int64_t id = job.id;
  const std::string dir = job_dir(id);
  if (job.state == "queued" && !move(id, "profiling", "started")) return;
  const int64_t attempt = store_.begin_attempt(id, resume);
  std::vector<std::string> argv = {o_.tula_binary, "tune"};
  if (resume) {
    for (const char* a : {"--resume", dir.c_str(), "--progress", "lines"}) argv.push_back(a);
  } else {
    const auto args = tune_arguments(job.spec, dir, o_.backend);
    argv.insert(argv.end(), args.begin(), args.end());
  }
  Running r;
  r.attempt = attempt;
  try {
    r.pid = start_tune_process(argv, lock_path(id), log_path(id), o_.workdir);
    r.own = true;
    store_.set_attempt_pid(attempt, r.pid);
    if (resume) events_.publish(id, "state", {{"state", job.state}, {"reason", "resumed from its checkpoint"}});
    spdlog::info("job {}: tune pid {} ({})", id, r.pid, resume ? "resumed" : "started");
  } catch (const JobBusy&) {
    // Its process runs already (started by a server that died after starting it): follow that one.
    store_.end_attempt(attempt, "not started: its tune process was running already");
    r.pid = lock_holder(lock_path(id)).value_or(0);
  } catch (const std::exception& e) {
    store_.end_attempt(attempt, std::string("could not start: ") + e.what());
    move(id, "failed", e.what());
    return;
  }
  std::lock_guard lock(mutex_);
  running_[id] = std::move(r);
}

}  // namespace tula::service
