// The Slurm backend: one batch job per launch, of the plan's layout
// (--nodes=N --ntasks-per-node=W --cpus-per-task=C, --gpus-per-node for GPU
// types, the machine type as a --constraint where nodes carry it as a
// Feature), whose script runs
//
//   srun --kill-on-bad-exit=1 --nodes=N --ntasks-per-node=W [--resv-ports=1] -- <worker command>
//
// so that each worker is one Slurm task and finds its rank, the world size
// and rank 0's host from Slurm's own variables (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, SLURM_STEP_NODELIST; distributed/rendezvous.cpp), and its
// port from the step's reserved ports (SLURM_STEP_RESV_PORTS, where the
// cluster's MpiParams has a port range; else from the job id). A failed task
// or node ends the step (--kill-on-bad-exit, srun's default on node failure),
// so a launch fails as a whole. Plans take only the nodes `sinfo` lists as up
// and idle (fit_catalog). Every client command (sbatch, scontrol, squeue,
// scancel) runs with a time limit. Accounting may be off, so the job's end is
// read from `scontrol show job` while the controller still keeps the record
// (MinJobAge), from an exit-status file the batch script writes after that.
// No LibTorch here.
#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ctime>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "tune/backend.hpp"
#include "tune/subprocess.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A client command's limit. They answer in milliseconds; a controller that
// is down may make them retry for several seconds before giving up.
constexpr milliseconds kClientTimeout{seconds(30)};
constexpr milliseconds kSubmitTimeout{seconds(60)};
// wait_for gives up on a controller that has not answered for this long.
constexpr milliseconds kLostContact{std::chrono::minutes(5)};
// Polling interval of wait_for: short at first, so that a quick end is seen
// quickly, and no shorter than this once a job runs for a while.
constexpr milliseconds kFirstPoll{100};
constexpr milliseconds kLongestPoll{1000};

// Whole seconds from submission to start that a job on idle nodes never
// reaches here (queued_s).
constexpr long long kLongestUnqueuedStartS = 2;
// The scheduler's pass that starts a job on idle nodes, part of every
// launch's start-up, queued or not (0-1 whole seconds measured here).
constexpr double kSchedulerPassS = 1.0;

// The batch script launches exactly one step, its srun.
constexpr const char* kWorkerStep = ".0";

constexpr const char* kBatchScript = "tula-slurm-batch.sh";

// Slurm's client commands (sinfo, sbatch, scontrol, squeue, scancel) for one
// cluster: the slurm.conf the backend was given, as SLURM_CONF for each
// command (sbatch passes it on to the job, so the job's srun uses it too), or
// the environment's.
struct SlurmClient {
  std::string conf;  // empty: the environment's SLURM_CONF, else Slurm's default

  ProcessResult run(const std::vector<std::string>& argv, milliseconds timeout) const {
    ProcessOptions options;
    options.timeout = timeout;
    if (!conf.empty()) options.env.push_back({"SLURM_CONF", conf});
    return run_process(argv, options);
  }
  // Which cluster the commands asked, for messages.
  std::string note() const {
    if (!conf.empty()) return "SLURM_CONF=" + conf;
    const char* env = std::getenv("SLURM_CONF");
    if (env != nullptr && *env != '\0') return std::string("SLURM_CONF=") + env;
    return "SLURM_CONF is not set (so /etc/slurm/slurm.conf)";
  }
};

// What a command said, on one line, for a message.
std::string said(const ProcessResult& r) {
  std::string text = trimmed(r.output);
  std::replace(text.begin(), text.end(), '\n', ' ');
  if (text.size() > 600) text = text.substr(0, 600) + "...";
  if (!r.started || r.timed_out || text.empty()) return r.describe() + (text.empty() ? "" : ": " + text);
  return text;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A job the controller no longer (or never) knew.
bool says_no_such_job(const std::string& output) { return contains(output, "Invalid job id"); }

// scancel's answer for a job that has already ended.
bool says_already_ended(const std::string& output) {
  return says_no_such_job(output) || contains(output, "already completing or completed");
}

std::string shell_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The value of `Key=` in `scontrol show job -o` output, up to the next space.
std::string field(const std::string& line, const std::string& key) {
  size_t at = 0;
  while ((at = line.find(key + "=", at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ' || line[at - 1] == '\n') {
      const size_t begin = at + key.size() + 1;
      const size_t end = line.find_first_of(" \n", begin);
      return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
    at += key.size();
  }
  return "";
}

// Base states in which a job has ended and none of its processes runs (a
// job whose processes are still being killed reads COMPLETING).
bool is_final_state(const std::string& state) {
  for (const char* s : {"COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                        "DEADLINE", "OUT_OF_MEMORY", "REVOKED"}) {
    if (state == s) return true;
  }
  return false;
}

std::optional<int> to_int(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoi(text);
}

// The signal whose strsignal() text is `text` ("Killed", "Terminated").
std::optional<int> signal_named(const std::string& text) {
  for (int sig = 1; sig < 65; ++sig) {
    const char* name = ::strsignal(sig);
    if (name != nullptr && text == name) return sig;
  }
  return std::nullopt;
}

std::string describe_signal(int sig) {
  const char* name = ::strsignal(sig);
  return fmt::format("killed by signal {}{}", sig, name ? fmt::format(" ({})", name) : "");
}

// The first failure srun reported in the log, from lines such as
//   srun: error: node1: task 1: Exited with exit code 3
//   srun: error: node1: tasks 0-1: Killed
struct TaskFailure {
  int exit_code = 0;   // 128 + N for signal N
  int signal = 0;      // the signal that ended the tasks, else 0
  std::string ranks;   // "1", "0-1"
  bool plural = false;

  std::string describe() const {
    const std::string how = signal != 0 ? describe_signal(signal) : fmt::format("exit status {}", exit_code);
    return fmt::format("{} (rank{}{})", how, plural ? "s " : " ", ranks);
  }
};

std::optional<TaskFailure> first_task_failure(const std::string& log) {
  size_t at = 0;
  while ((at = log.find("srun: error: ", at)) != std::string::npos) {
    const size_t eol = std::min(log.find('\n', at), log.size());
    const std::string line = log.substr(at, eol - at);
    at = eol;
    for (const char* word : {": tasks ", ": task "}) {
      const size_t w = line.find(word);
      if (w == std::string::npos) continue;
      const size_t begin = w + std::strlen(word);
      const size_t colon = line.find(": ", begin);
      if (colon == std::string::npos) break;
      TaskFailure failure;
      failure.ranks = line.substr(begin, colon - begin);
      failure.plural = std::string(word) == ": tasks ";
      const std::string what = line.substr(colon + 2);
      const std::string exited = "Exited with exit code ";
      if (what.rfind(exited, 0) == 0) {
        const auto code = to_int(trimmed(what.substr(exited.size())));
        if (!code) break;
        failure.exit_code = *code;
      } else if (const auto sig = signal_named(trimmed(what))) {
        failure.signal = *sig;
        failure.exit_code = 128 + *sig;
      } else {
        break;
      }
      if (failure.exit_code != 0) return failure;
      break;
    }
  }
  return std::nullopt;
}

std::string read_from(const std::string& path, std::uintmax_t offset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(offset));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

// One node as `sinfo --Node` lists it.
struct SlurmNode {
  std::string name;
  std::string state;                  // idle, mixed, allocated, down*, drained, idle* (not responding), ...
  std::vector<std::string> features;  // AVAIL_FEATURES: machine types on the emulated cluster
};

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, by)) {
    if (!part.empty() && part != "(null)") parts.push_back(part);
  }
  return parts;
}

// The cluster's nodes (of `partition`, when given), each once.
std::vector<SlurmNode> list_nodes(const SlurmClient& slurm, const std::string& partition) {
  std::vector<std::string> args = {"sinfo", "--noheader", "--Node", "--format=%N|%T|%f"};
  if (!partition.empty()) args.push_back("--partition=" + partition);
  const ProcessResult r = slurm.run(args, kClientTimeout);
  if (!r.ok()) throw BackendError("cannot list Slurm's nodes: sinfo " + said(r) + "; " + slurm.note());
  std::vector<SlurmNode> nodes;
  for (const auto& line : split(r.output, '\n')) {
    const auto fields = split(line, '|');
    if (fields.size() < 2) continue;
    const std::string name = trimmed(fields[0]);
    if (std::any_of(nodes.begin(), nodes.end(), [&](const SlurmNode& n) { return n.name == name; })) continue;
    nodes.push_back({name, trimmed(fields[1]), fields.size() > 2 ? split(trimmed(fields[2]), ',') : std::vector<std::string>{}});
  }
  return nodes;
}

// Up, responding and with nothing of its own running: a plan may count it.
bool up_and_idle(const SlurmNode& node) { return node.state == "idle"; }

// Up and responding, whatever runs there (a cluster that shares its nodes).
bool up(const SlurmNode& node) {
  return node.state == "idle" || node.state == "mixed" || node.state == "allocated" || node.state == "completing";
}

bool has_feature(const SlurmNode& node, const std::string& feature) {
  return std::find(node.features.begin(), node.features.end(), feature) != node.features.end();
}

bool any_has_feature(const std::vector<SlurmNode>& nodes, const std::string& feature) {
  return std::any_of(nodes.begin(), nodes.end(), [&](const SlurmNode& n) { return has_feature(n, feature); });
}

std::string names_of(const std::vector<const SlurmNode*>& nodes) {
  std::string text;
  for (const auto* n : nodes) text += (text.empty() ? "" : ",") + n->name;
  return text;
}

// Whether srun can reserve ports for a step (MpiParams=ports=LOW-HIGH).
bool reserves_ports(const SlurmClient& slurm) {
  const ProcessResult r = slurm.run({"scontrol", "show", "config"}, kClientTimeout);
  if (!r.ok()) return false;
  for (const auto& line : split(r.output, '\n')) {
    if (line.rfind("MpiParams", 0) == 0 && contains(line, "ports=")) return true;
  }
  return false;
}

// A pending job's Reason that it never leaves by waiting: nodes it needs are
// down or drained (ReqNodeNotAvail), or the partition cannot hold its layout
// (more nodes than it has, a constraint no node meets) where the cluster
// does not refuse such a job at its submission (EnforcePartLimits=NO).
bool never_starts(const std::string& reason) {
  for (const char* r : {"ReqNodeNotAvail", "PartitionNodeLimit", "PartitionConfig", "BadConstraints"}) {
    if (reason.rfind(r, 0) == 0) return true;
  }
  return false;
}

// Seconds from one `scontrol show job` time ("2026-12-07T13:37:40", the
// controller's local time) to another; nullopt where either is not a time.
std::optional<long long> seconds_between(const std::string& from, const std::string& to) {
  auto parse = [](const std::string& text) -> std::optional<std::time_t> {
    std::tm tm{};
    std::istringstream in(text);
    in >> std::get_time(&tm, "%Y-%m-%dT%H:%M:%S");
    if (in.fail()) return std::nullopt;
    return ::timegm(&tm);  // both in the same zone: the difference holds
  };
  const auto a = parse(from), b = parse(to);
  if (!a || !b || *b < *a) return std::nullopt;
  return static_cast<long long>(*b - *a);
}

class SlurmLaunch : public RunningLaunch {
 public:
  SlurmLaunch(SlurmClient slurm, long long job_id, std::string log_path, std::uintmax_t log_offset,
              std::string status_path)
      : slurm_(std::move(slurm)),
        job_id_(job_id),
        id_(std::to_string(job_id)),
        log_path_(std::move(log_path)),
        log_offset_(log_offset),
        status_path_(std::move(status_path)),
        last_contact_(Clock::now()) {}

  std::optional<LaunchExit> wait_for(milliseconds timeout) override {
    if (end_) return end_;
    const auto deadline = Clock::now() + timeout;
    milliseconds interval = kFirstPoll;
    while (true) {
      if (auto end = poll(deadline)) {
        if (queued_s().value_or(0) > 0) {
          end->description += fmt::format("; it waited {:.1f} s in Slurm's queue", *queued_s());
        }
        end_ = end;
        return end_;
      }
      const auto now = Clock::now();
      if (now >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::min<Clock::duration>(interval, deadline - now));
      interval = std::min(interval * 2, kLongestPoll);
    }
  }

  void request_stop() override {
    if (end_) return;
    stop_requested_ = true;
    // SIGTERM to the job's steps, not to the batch shell: the workers get it
    // from their slurmstepd, finish, and the script records how srun ended.
    // Before the step exists such a signal reaches nobody (and scancel still
    // says it was sent), so a job still pending or still starting its srun
    // is cancelled instead: nothing to checkpoint yet, and a task started in
    // the meantime still gets SIGTERM first (then SIGKILL after KillWait).
    if (worker_step_started()) {
      scancel({"--signal=TERM", id_}, "ask slurm job " + id_ + " to stop");
    } else {
      scancel({id_}, "cancel slurm job " + id_);
    }
  }

  void kill() override {
    if (end_) return;
    killed_ = true;
    // Cancelling a job sends SIGTERM and waits the cluster's KillWait before
    // SIGKILL; SIGKILL to the workers' step first makes the end immediate.
    // Either may find the job (or the step) gone already.
    scancel({"--signal=KILL", id_ + kWorkerStep}, "kill the workers of slurm job " + id_, true);
    scancel({id_}, "cancel slurm job " + id_);
  }

  bool queued() const override { return pending_; }
  // The wait from submission to start where the job waited for nodes: a look
  // saw it pending for a reason (Resources, Priority), or Slurm's SubmitTime
  // to StartTime read two or more seconds. A job on idle nodes starts in 0 or
  // 1 whole seconds (the scheduler's next pass, Reason=None; 0-1 s in every
  // launch on idle nodes measured here, docs/slurm.md): that is its start-up,
  // not a queue. What counts is the wait beyond that pass, which every launch
  // has (a relaunch on idle nodes too): the runner subtracts the queue from
  // the launch's start-up to price the next launch, so the pass stays in the
  // price. The wait's length is this process's own (started_after_s_), not
  // Slurm's whole seconds, which truncate each end: a second off a start-up
  // of 1-2 s is most of it.
  std::optional<double> queued_s() const override {
    if (!queue_wait_s_) return std::nullopt;
    const bool waited = waited_for_nodes_ || *queue_wait_s_ >= kLongestUnqueuedStartS;
    const double wait = started_after_s_.value_or(static_cast<double>(*queue_wait_s_));
    return waited ? std::max(0.0, wait - kSchedulerPassS) : 0.0;
  }

  std::string where() const override { return "slurm job " + id_; }

  nlohmann::json handle() const override { return {{"backend", "slurm"}, {"job_id", job_id_}}; }

 private:
  // One look at the job; its end once it has ended.
  std::optional<LaunchExit> poll(Clock::time_point deadline) {
    const auto look = Clock::now();
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - look);
    const ProcessResult r = slurm_.run({"scontrol", "show", "job", "-o", id_},
                                        std::clamp(left, milliseconds(seconds(5)), kClientTimeout));
    if (r.ok()) {
      last_contact_ = Clock::now();
      const std::string state = field(r.output, "JobState");
      if (state.empty()) {
        throw BackendError("cannot read the state of slurm job " + id_ + " from `scontrol show job`: " + said(r));
      }
      pending_ = state == "PENDING";
      if (pending_) last_pending_look_ = look;
      if (!pending_ && !started_after_s_) {
        // It started between the last look that saw it pending (or the
        // submission) and this one: the middle, within half their distance.
        started_after_s_ = std::chrono::duration<double>(last_pending_look_ - submitted_).count() +
                           std::chrono::duration<double>(look - last_pending_look_).count() / 2;
      }
      const std::string reason = field(r.output, "Reason");
      if (pending_ && !reason.empty() && reason != "None") waited_for_nodes_ = true;
      if (state != "PENDING" && !queue_wait_s_) queue_wait_s_ = seconds_between(field(r.output, "SubmitTime"),
                                                                                 field(r.output, "StartTime"));
      if (state == "PENDING" && never_starts(field(r.output, "Reason"))) {
        // It would wait for ever (a node lost since the plan, a layout the
        // partition cannot hold): the launch fails, and the runner re-plans
        // on the nodes left.
        scancel({id_}, "cancel slurm job " + id_);
        return LaunchExit{1, "slurm job " + id_ + " cannot start: " + field(r.output, "Reason")};
      }
      if (!is_final_state(state)) return std::nullopt;
      return ended(state, field(r.output, "ExitCode"), field(r.output, "Reason"));
    }
    if (r.started && !r.timed_out && says_no_such_job(r.output)) {
      // Without accounting, the controller forgets a job MinJobAge after its end.
      last_contact_ = Clock::now();
      return forgotten();
    }
    if (Clock::now() - last_contact_ > kLostContact) {
      throw BackendError(fmt::format(
          "lost contact with the Slurm controller while watching slurm job {}: `scontrol show job` failed for {} s; "
          "last: {}; {}",
          id_, std::chrono::duration_cast<seconds>(kLostContact).count(), said(r), slurm_.note()));
    }
    return std::nullopt;  // a passing hiccup of the controller
  }

  // "after a stop request" and the like, for descriptions.
  std::string context() const {
    if (killed_) return " after kill";
    if (stop_requested_) return " after a stop request";
    return "";
  }

  // The end of a job that has ended in `state` with ExitCode `exit` ("a:b",
  // a the batch script's status, b the signal that ended it).
  LaunchExit ended(const std::string& state, const std::string& exit, const std::string& reason) const {
    const size_t colon = exit.find(':');
    const int status = to_int(exit.substr(0, colon)).value_or(0);
    const int signal = colon == std::string::npos ? 0 : to_int(exit.substr(colon + 1)).value_or(0);
    const auto failure = first_task_failure(read_from(log_path_, log_offset_));
    if (state == "COMPLETED" && status == 0 && signal == 0) return {0, "completed"};
    if (state == "CANCELLED") {
      // How the workers ended, when they had started; else the batch shell's
      // signal (scancel ends a job with SIGTERM, then SIGKILL after KillWait).
      if (failure) return {failure->exit_code, "cancelled" + context() + ": " + failure->describe()};
      return {signal != 0 ? 128 + signal : 128 + SIGTERM,
              "cancelled" + context() + (signal != 0 ? ": batch script " + describe_signal(signal) : "")};
    }
    if (failure) return {failure->exit_code, failure->describe() + context()};
    const int code = status != 0 ? status : signal != 0 ? 128 + signal : 1;
    std::string what = state;
    std::transform(what.begin(), what.end(), what.begin(), [](unsigned char c) { return std::tolower(c); });
    std::replace(what.begin(), what.end(), '_', ' ');
    const std::string how = status == 0 && signal != 0 ? describe_signal(signal) : fmt::format("exit status {}", code);
    return {code, fmt::format("slurm job {}: {}{}{}", what, how,
                              reason.empty() || reason == "None" ? "" : " (" + reason + ")", context())};
  }

  // The end of a job the controller no longer knows: from the status file
  // the batch script wrote, and the log.
  LaunchExit forgotten() const {
    const std::string log = read_from(log_path_, log_offset_);
    std::ifstream in(status_path_);
    int status = -1;
    if (in >> status) {
      if (status == 0) return {0, "completed"};
      if (const auto failure = first_task_failure(log)) return {failure->exit_code, failure->describe() + context()};
      return {status, fmt::format("exit status {}{}", status, context())};
    }
    if (contains(log, "*** JOB " + id_ + " ON ") && contains(log, " CANCELLED AT ")) {
      return {128 + SIGTERM, "cancelled" + context()};
    }
    return {1, "slurm job " + id_ + " ended unseen: the controller no longer knows it (no accounting keeps "
                                    "finished jobs) and its batch script left no exit status in " +
                   status_path_ + context()};
  }

  // True once the batch script's srun step is listed.
  bool worker_step_started() const {
    const ProcessResult r = slurm_.run({"squeue", "--steps", "--noheader", "--format=%i", "--jobs", id_},
                                        kClientTimeout);
    if (!r.ok()) return false;  // cancelling is the safe choice
    return contains("\n" + r.output, "\n" + id_ + kWorkerStep + "\n") ||
           contains("\n" + r.output, "\n" + id_ + kWorkerStep + " ");
  }

  void scancel(std::vector<std::string> args, const std::string& what, bool quiet = false) const {
    args.insert(args.begin(), "scancel");
    const ProcessResult r = slurm_.run(args, kClientTimeout);
    if (r.ok() || quiet || (r.started && !r.timed_out && says_already_ended(r.output))) return;
    throw BackendError("cannot " + what + ": scancel " + said(r) + "; " + slurm_.note());
  }

  SlurmClient slurm_;
  long long job_id_;
  std::string id_;
  std::string log_path_;
  std::uintmax_t log_offset_;  // the log's size at submission: this launch's lines follow it
  std::string status_path_;
  Clock::time_point last_contact_;
  bool stop_requested_ = false;
  bool killed_ = false;
  bool pending_ = true;  // until a look at the job says otherwise
  bool waited_for_nodes_ = false;  // a look saw it pending for a reason (not just the scheduler's next pass)
  std::optional<long long> queue_wait_s_;  // from submission to start, once it started (Slurm's whole seconds)
  // The same on this process's clock: from the submission (this object's
  // making, as sbatch returned) to the middle of the looks around the start.
  Clock::time_point submitted_ = Clock::now();
  Clock::time_point last_pending_look_ = submitted_;
  std::optional<double> started_after_s_;
  std::optional<LaunchExit> end_;
};

class SlurmBackend : public Backend {
 public:
  SlurmBackend(BackendOptions options, std::string name)
      : options_(std::move(options)), name_(std::move(name)), slurm_{options_.slurm_conf} {}

  std::string name() const override { return name_; }
  bool places_nodes() const override { return true; }

  // Each machine type on the nodes that carry it as a Feature and that sinfo
  // lists as idle now, so that a plan never counts nodes another job holds;
  // a type none of whose nodes is idle, but some up (every one held by other
  // jobs), on those: its launch waits in Slurm's queue until they are free,
  // and the report shows the wait. A cluster whose nodes carry none of the
  // catalog's types runs any type on its nodes that are up (the plan's
  // layout still needs that many of them).
  std::vector<std::string> fit_catalog(plan::Catalog& catalog) const override {
    const auto nodes = list_nodes(slurm_, options_.slurm_partition);
    const bool typed = std::any_of(catalog.machines.begin(), catalog.machines.end(),
                                   [&](const plan::MachineType& m) { return any_has_feature(nodes, m.spec.name); });
    std::vector<std::string> notes;
    std::vector<plan::MachineType> kept;
    for (auto& m : catalog.machines) {
      std::vector<const SlurmNode*> usable, busy;
      int of_type = 0;
      for (const auto& n : nodes) {
        if (typed && !has_feature(n, m.spec.name)) continue;
        ++of_type;
        if (typed ? up_and_idle(n) : up(n)) {
          usable.push_back(&n);
        } else if (up(n)) {
          busy.push_back(&n);
        }
      }
      std::string which = typed ? "up and idle" : "up";
      if (usable.empty() && !busy.empty()) {
        usable = busy;
        which = "up, every one held by other jobs now (the launch waits in Slurm's queue for them)";
      }
      const auto count = static_cast<int64_t>(usable.size());
      if (count == 0) {
        notes.push_back(fmt::format("machine type {}: none of its {} Slurm nodes is up (sinfo): not planned",
                                    m.spec.name, of_type));
        continue;
      }
      if (count < m.max_nodes) m.max_nodes = count;
      notes.push_back(fmt::format("machine type {}: planned on at most {} of its {} Slurm nodes, those sinfo lists as "
                                  "{}: {}{}",
                                  m.spec.name, m.max_nodes, of_type, which, names_of(usable),
                                  typed ? "" : " (no node carries a catalog type as a Feature)"));
      kept.push_back(m);
    }
    if (kept.empty()) {
      throw BackendError(std::string("no Slurm node is up for any machine type of ") +
                         "the catalog (sinfo" + (options_.slurm_partition.empty() ? "" : " --partition=" +
                         options_.slurm_partition) + "); " + slurm_.note());
    }
    catalog.machines = std::move(kept);
    return notes;
  }

  void check_available() const override {
    for (const char* program : {"sbatch", "scontrol", "squeue", "scancel"}) {
      if (find_program(program).empty()) {
        const char* path = std::getenv("PATH");
        throw BackendError(std::string("Slurm is not available: ") + program + " is not installed (not in PATH=" +
                           (path ? path : "") + "); install Slurm's client commands (Debian: slurm-wlm)");
      }
    }
    const ProcessResult ping = slurm_.run({"scontrol", "ping"}, kClientTimeout);
    if (!ping.ok() || !contains(ping.output, "is UP")) {
      // Without the banner scontrol adds ("** RESTORE SLURMCTLD DAEMON TO SERVICE **").
      ProcessResult plain = ping;
      plain.output.clear();
      std::istringstream lines(ping.output);
      for (std::string line; std::getline(lines, line);) {
        if (line.rfind("**", 0) != 0) plain.output += line + "\n";
      }
      throw BackendError("Slurm is not reachable: `scontrol ping` said: " + said(plain) +
                         "; is slurmctld running? " + slurm_.note());
    }
    if (!options_.slurm_partition.empty()) {
      const ProcessResult sinfo = slurm_.run(
          {"sinfo", "--noheader", "--format=%a", "--partition", options_.slurm_partition}, kClientTimeout);
      const std::string availability = trimmed(sinfo.output);
      if (!sinfo.ok() || availability.empty()) {
        throw BackendError("Slurm partition '" + options_.slurm_partition + "' is not known: sinfo " + said(sinfo) +
                           "; " + slurm_.note());
      }
      if (availability.rfind("up", 0) != 0) {
        throw BackendError("Slurm partition '" + options_.slurm_partition + "' is " + availability + ", not up");
      }
    }
  }

  std::unique_ptr<RunningLaunch> start(const WorkerLaunch& launch) override {
    if (launch.workers < 1) throw BackendError(fmt::format("cannot start {} workers", launch.workers));
    if (launch.nodes < 1 || launch.workers % launch.nodes != 0) {
      throw BackendError(fmt::format("a launch of {} workers cannot be spread evenly over {} nodes", launch.workers,
                                     launch.nodes));
    }
    if (launch.worker_command.empty() || launch.worker_command.front().empty()) {
      throw BackendError("no worker command to start");
    }
    if (launch.log_path.empty() || launch.work_dir.empty()) {
      throw BackendError("a Slurm launch needs a log path and a work directory");
    }
    // Absolute: the job runs elsewhere (--chdir) and maybe on another host.
    const fs::path work_dir = fs::absolute(launch.work_dir);
    const fs::path log_path = fs::absolute(launch.log_path);
    std::error_code ec;
    fs::create_directories(work_dir, ec);
    if (ec) throw BackendError("cannot create the work directory " + work_dir.string() + ": " + ec.message());
    fs::create_directories(log_path.parent_path(), ec);
    if (ec) throw BackendError("cannot create the log's directory " + log_path.parent_path().string() + ": " + ec.message());
    const std::uintmax_t log_offset = fs::exists(log_path, ec) ? fs::file_size(log_path, ec) : 0;

    const std::string script_path = (work_dir / kBatchScript).string();
    try {
      common::write_file_atomically(script_path, batch_script(launch, work_dir, reserves_ports(slurm_)));
    } catch (const std::exception& e) {
      throw BackendError(std::string("cannot write the batch script: ") + e.what());
    }

    std::vector<std::string> sbatch = {"sbatch", "--parsable", "--job-name=" + launch.name};
    for (auto& arg : layout_args(launch)) sbatch.push_back(std::move(arg));
    // The machine type as a constraint where the nodes carry it as a Feature.
    if (!launch.machine_type.empty() && any_has_feature(list_nodes(slurm_, options_.slurm_partition), launch.machine_type)) {
      sbatch.push_back("--constraint=" + launch.machine_type);
    }
    // A job that failed stays failed: the runner decides what runs next.
    sbatch.push_back("--no-requeue");
    sbatch.push_back("--output=" + log_path.string());
    sbatch.push_back("--open-mode=append");
    sbatch.push_back("--chdir=" + work_dir.string());
    if (!options_.slurm_partition.empty()) sbatch.push_back("--partition=" + options_.slurm_partition);
    sbatch.push_back(script_path);
    const ProcessResult r = slurm_.run(sbatch, kSubmitTimeout);
    if (!r.ok()) throw BackendError("sbatch failed: " + said(r) + "; " + slurm_.note());
    // --parsable prints "ID" or "ID;cluster", possibly after warnings.
    std::optional<long long> job_id;
    size_t at = 0;
    const std::string& out = r.output;
    while (at < out.size()) {
      const size_t eol = std::min(out.find('\n', at), out.size());
      const std::string line = trimmed(out.substr(at, eol - at));
      const std::string id = line.substr(0, line.find(';'));
      if (!id.empty() && id.size() < 19 && id.find_first_not_of("0123456789") == std::string::npos) {
        job_id = std::stoll(id);
      }
      at = eol + 1;
    }
    if (!job_id) throw BackendError("sbatch printed no job id: " + said(r));
    return std::make_unique<SlurmLaunch>(slurm_, *job_id, log_path.string(), log_offset,
                                         (work_dir / ("slurm-" + std::to_string(*job_id) + ".exit-status")).string());
  }

 private:
  // The plan's layout, for sbatch and the same for its srun.
  static std::vector<std::string> layout_args(const WorkerLaunch& launch) {
    std::vector<std::string> args = {"--nodes=" + std::to_string(launch.nodes),
                                     "--ntasks-per-node=" + std::to_string(launch.workers / launch.nodes)};
    if (launch.cpus_per_worker > 0) args.push_back("--cpus-per-task=" + std::to_string(launch.cpus_per_worker));
    if (launch.gpus_per_node > 0) args.push_back("--gpus-per-node=" + std::to_string(launch.gpus_per_node));
    return args;
  }

  static std::string batch_script(const WorkerLaunch& launch, const fs::path& work_dir, bool resv_ports) {
    std::string srun = "srun --kill-on-bad-exit=1";
    for (const auto& arg : layout_args(launch)) {
      if (arg.rfind("--gpus-per-node", 0) != 0) srun += " " + arg;  // the step takes the job's GPUs
    }
    if (resv_ports) srun += " --resv-ports=1";
    std::string command;
    for (const auto& word : launch.worker_command) command += " " + shell_quote(word);
    const std::string status_file = shell_quote((work_dir / "slurm-").string()) + "\"$SLURM_JOB_ID\".exit-status";
    return "#!/bin/sh\n"
           "# Written by tula's Slurm backend: one Slurm task per worker. The workers\n"
           "# rendezvous by Slurm's variables (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID,\n"
           "# SLURM_STEP_NODELIST, SLURM_STEP_RESV_PORTS or the job id for rank 0's port),\n"
           "# so variables of other launchers that sbatch copied from the submitting\n"
           "# shell must not override them.\n"
           "unset RANK WORLD_SIZE LOCAL_RANK LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT\n"
           "unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE OMPI_COMM_WORLD_LOCAL_RANK OMPI_COMM_WORLD_LOCAL_SIZE\n"
           "# Rank 0 runs on the first node; where its name does not resolve (nodes\n"
           "# known to Slurm by NodeAddr only), the workers meet at that address.\n"
           "first=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\n"
           "if [ -n \"$first\" ] && ! getent hosts \"$first\" >/dev/null; then\n"
           "  MASTER_ADDR=$(scontrol show node \"$first\" | sed -n 's/.*NodeAddr=\\([^ ]*\\).*/\\1/p')\n"
           "  [ -n \"$MASTER_ADDR\" ] && export MASTER_ADDR\n"
           "fi\n" +
           srun + " --" + command +
           "\n"
           "status=$?\n"
           "# How srun ended, for when the controller has forgotten the job (no accounting).\n"
           "echo \"$status\" > " +
           status_file + ".tmp && mv -f " + status_file + ".tmp " + status_file +
           "\n"
           "exit \"$status\"\n";
  }

  BackendOptions options_;
  std::string name_;
  SlurmClient slurm_;
};

}  // namespace

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options, const std::string& name) {
  return std::make_unique<SlurmBackend>(options, name);
}

}  // namespace tula::tune
