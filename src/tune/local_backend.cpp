// The local backend: the workers are started by `tula launch` on this machine
// (torchrun's variables, loopback rendezvous), in a process group of its own.
// request_stop() sends SIGTERM to the launcher, which passes it to every
// worker; the workers die with the launcher if it is killed, and the launcher
// with the process that started it (child_process.hpp), so no worker
// outlives the job. The port is free when chosen; a launch that loses it to
// another process fails and the runner relaunches (bounded retries).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "common/tcp_port.hpp"
#include "tune/backend.hpp"
#include "tune/child_process.hpp"

namespace tula::tune {
namespace {

class LocalLaunch : public RunningLaunch {
 public:
  LocalLaunch(const std::vector<std::string>& argv, const WorkerLaunch& launch)
      : child_(start_child_process(argv, launch.log_path, launch.work_dir)), log_path_(launch.log_path) {}

  std::optional<LaunchExit> wait_for(std::chrono::milliseconds timeout) override {
    const auto status = child_.wait_for(timeout);
    if (!status) return std::nullopt;
    LaunchExit e;
    // Reaped by someone else (SIGCHLD ignored): a failure as far as we know.
    e.exit_code = status->is_known() ? status->exit_code() : 1;
    const std::string last = status->success() ? "" : common::last_line_of(log_path_);
    e.description = status->describe() + (last.empty() ? "" : ": " + last);
    return e;
  }
  void request_stop() override { child_.signal(SIGTERM); }
  void kill() override { child_.signal(SIGKILL); }
  std::string where() const override { return fmt::format("local launcher pid {}", child_.pid()); }
  nlohmann::json handle() const override { return {{"backend", "local"}, {"pid", child_.pid()}}; }

 private:
  common::Child child_;
  std::string log_path_;
};

class LocalBackend : public Backend {
 public:
  explicit LocalBackend(BackendOptions options) : options_(std::move(options)) {}
  std::string name() const override { return "local"; }

  void check_available() const override {
    if (::access(options_.tula_binary.c_str(), X_OK) != 0) {
      throw BackendError("the local backend cannot run " + options_.tula_binary + ": " + std::strerror(errno));
    }
  }

  std::unique_ptr<RunningLaunch> start(const WorkerLaunch& launch) override {
    check_available();
    if (launch.workers < 1) throw BackendError("a launch needs at least one worker");
    std::vector<std::string> argv = {options_.tula_binary, "launch", "--nproc", std::to_string(launch.workers),
                                     "--master-port", std::to_string(common::free_tcp_port()), "--"};
    argv.insert(argv.end(), launch.worker_command.begin(), launch.worker_command.end());
    return std::make_unique<LocalLaunch>(argv, launch);
  }

 private:
  BackendOptions options_;
};

}  // namespace

std::unique_ptr<Backend> make_local_backend(const BackendOptions& options) {
  return std::make_unique<LocalBackend>(options);
}

}  // namespace tula::tune
