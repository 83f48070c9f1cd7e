#include "profile/comm_trials.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "common/tcp_port.hpp"
#include "common/text.hpp"
#include "distributed/launcher.hpp"
#include "predict/stats.hpp"
#include "common/remove_tree.hpp"

namespace tula::profile {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A private directory for the specs and results, removed however we leave.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tula-profile-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create a temporary directory in /tmp");
    path_ = pattern;
  }
  ~TempDir() {
    common::remove_tree(path_);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string self_executable() { return fs::read_symlink("/proc/self/exe").string(); }

json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("profile workers wrote no results (" + path.string() + " is missing)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw std::runtime_error("profile workers' results " + path.string() + " are not JSON: " + e.what());
  }
}

std::vector<double> doubles(const json& j, const char* key) { return j.at(key).get<std::vector<double>>(); }

}  // namespace

namespace {

// Whether some process listens on `port` now. SO_REUSEADDR lets the bind past
// connections of our own last attempt lingering in TIME_WAIT, so only a live
// listener counts.
bool someone_listens_on(const std::string& address, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr = common::ipv4_address(address, port);
  const bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return taken;
}

// Runs the workers; with a port of our own choosing, a launch that failed
// because another process bound that port between the choice and rank 0's
// bind is run again on a fresh port.
distributed::LaunchResult launch_on_a_free_port(distributed::LaunchOptions launch, bool choose_port,
                                                const Log& log) {
  constexpr int kAttempts = 3;
  for (int attempt = 1;; ++attempt) {
    if (choose_port) launch.master_port = common::free_tcp_port(launch.master_addr);
    if (log) {
      log(fmt::format("  {} workers on loopback (port {})", launch.nproc_per_node, launch.master_port));
    }
    auto result = distributed::launch_workers(launch);
    if (result.exit_code == 0 || !choose_port || attempt == kAttempts ||
        !someone_listens_on(launch.master_addr, launch.master_port)) {
      return result;
    }
    if (log) log(fmt::format("  port {} was taken by another process; choosing another", launch.master_port));
  }
}

}  // namespace

void add_worker_results(const json& result, CommTrialResult& out) {
  try {
    const int64_t workers = result.at("workers").get<int64_t>();
    const int64_t per_node = result.at("workers_per_node").get<int64_t>();
    for (const auto& row : result.at("allreduce")) {
      out.allreduce.push_back({workers, row.at("bytes").get<int64_t>(), doubles(row, "seconds")});
    }
    for (const auto& row : result.at("overlap")) {
      const int64_t b = row.at("batch_per_worker").get<int64_t>();
      predict::OverlapSample o;
      o.workers = workers;
      o.workers_per_node = per_node;
      o.batch_per_worker = b;
      o.hidden_fraction = std::clamp(predict::median(doubles(row, "hidden_fraction")), 0.0, 1.0);
      o.step_s = doubles(row, "step_s");
      out.overlap.push_back(o);
      predict::ComputeSample c;
      c.batch_per_worker = b;
      c.workers_per_node = per_node;
      c.forward_backward_s = doubles(row, "forward_backward_s");
      out.contention.push_back(c);
    }
  } catch (const json::exception& e) {
    throw std::runtime_error(std::string("profile workers' results are malformed: ") + e.what());
  }
  out.raw.push_back(result);
}

CommTrialResult run_comm_trials(const CommTrialOptions& o, const Log& log) {
  CommTrialResult out;
  if (o.workers.empty()) return out;
  TempDir dir;
  const std::string exe = o.executable.empty() ? self_executable() : o.executable;
  for (const int64_t n : o.workers) {
    if (o.stop_before && n != o.workers.front()) {
      const std::string why = o.stop_before(n);
      if (!why.empty()) {
        out.notes.push_back(fmt::format("communication trials with {} or more workers left out: {}", n, why));
        if (log) log("  note: " + out.notes.back());
        break;
      }
    }
    if (n < 2) {
      throw std::invalid_argument(fmt::format("--workers: communication needs at least 2 workers, got {}", n));
    }
    WorkerSpec spec = o.spec;
    spec.result_path = (dir.path() / ("result-" + std::to_string(n) + ".json")).string();
    const auto spec_path = dir.path() / ("spec-" + std::to_string(n) + ".json");
    common::write_file_atomically(spec_path.string(), to_json(spec).dump(2));

    distributed::LaunchOptions launch;
    launch.nproc_per_node = static_cast<int>(n);
    launch.master_addr = o.master_addr;
    launch.master_port = o.master_port;
    launch.command = {exe, "profile-worker", "--spec", spec_path.string()};
    launch.kill_grace = o.kill_grace;
    const auto result = launch_on_a_free_port(launch, o.master_port <= 0, log);
    if (result.exit_code != 0) {
      std::string why =
          fmt::format("communication trial with {} workers failed: rank {} {}", n, result.failed_rank, result.failure);
      if (result.failure.find("SIGALRM") != std::string::npos) {
        why += fmt::format(" (it ran past its {} s deadline)", spec.deadline_s);
      }
      throw std::runtime_error(why);
    }
    const auto before = out.allreduce.size();
    add_worker_results(read_json(spec.result_path), out);
    if (log) {
      for (size_t i = before; i < out.allreduce.size(); ++i) {
        const auto& a = out.allreduce[i];
        log("    allreduce " + common::format_bytes(static_cast<double>(a.bytes)) + ": " +
            common::format_seconds(predict::median(a.seconds)));
      }
      for (const auto& ov : out.overlap) {
        if (ov.workers != n) continue;
        log(fmt::format("    DDP step at batch {}: {}, {}% of allreduce hidden behind backward", ov.batch_per_worker,
                        common::format_seconds(predict::median(ov.step_s)),
                        static_cast<int>(100 * ov.hidden_fraction + 0.5)));
      }
    }
  }
  return out;
}

}  // namespace tula::profile
