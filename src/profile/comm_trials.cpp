#include "profile/comm_trials.hpp"

#include <algorithm>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>
#include <torch/torch.h>

#include "common/tcp_port.hpp"
#include "common/text.hpp"
#include "predict/stats.hpp"

namespace tula::profile {
namespace {

using nlohmann::json;

std::vector<double> doubles(const json& j, const char* key) { return j.at(key).get<std::vector<double>>(); }

struct RanksRun {
  json result;             // rank 0's document
  int failed_rank = -1;    // -1: none failed
  std::string failure;
};

// `n` ranks as threads, each with its share of the cores as `tula train`
// gives a worker; joined before returning, whatever happened. The first
// failure reported is rank 0's, else the lowest failed rank's: a peer of a
// failed rank fails after it, on the closed connection or its timeout.
RanksRun run_ranks(const WorkerSpec& spec, int64_t n, const std::string& addr, int port) {
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const int64_t threads = spec.threads > 0 ? spec.threads : std::max<int64_t>(1, cores / n);
  std::vector<std::string> errors(static_cast<size_t>(n));
  RanksRun run;
  {
    std::vector<std::thread> ranks;
    for (int64_t r = 0; r < n; ++r) {
      ranks.emplace_back([&, r] {
        distributed::RendezvousInfo rdv;
        rdv.rank = rdv.local_rank = static_cast<int>(r);
        rdv.world_size = rdv.local_world_size = static_cast<int>(n);
        rdv.master_addr = addr;
        rdv.master_port = port;
        rdv.source = "profile";
        try {
          json result = run_comm_rank(spec, rdv, threads);
          if (r == 0) run.result = std::move(result);
        } catch (const std::exception& e) {
          errors[static_cast<size_t>(r)] = e.what();
        }
      });
    }
    for (auto& t : ranks) t.join();
  }
  for (size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    run.failed_rank = static_cast<int>(r);
    run.failure = errors[r];
    break;
  }
  return run;
}

// Whether rank 0 failed because the port was taken (the communicator says so):
// another process bound it between its choice and rank 0's bind.
bool port_was_taken(const RanksRun& run) {
  return run.failed_rank == 0 && run.failure.find("port is already in use") != std::string::npos;
}

// Runs the ranks; with a port of our own choosing, a run whose port was taken
// is run again on a fresh port.
RanksRun run_on_a_free_port(const CommTrialOptions& o, int64_t n, const Log& log) {
  constexpr int kAttempts = 3;
  const bool choose_port = o.master_port <= 0;
  for (int attempt = 1;; ++attempt) {
    const int port = choose_port ? common::free_tcp_port(o.master_addr) : o.master_port;
    if (log) log(fmt::format("  {} workers on loopback (port {}), threads of this process", n, port));
    auto run = run_ranks(o.spec, n, o.master_addr, port);
    if (!choose_port || attempt == kAttempts || !port_was_taken(run)) {
      return run;
    }
    if (log) log(fmt::format("  port {} was taken by another process; choosing another", port));
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
  const int own_threads = torch::get_num_threads();
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
    const auto run = run_on_a_free_port(o, n, log);
    // The ranks set the process-wide default a new thread starts with.
    torch::set_num_threads(own_threads);
    if (run.failed_rank >= 0) {
      throw std::runtime_error(
          fmt::format("communication trial with {} workers failed: rank {}: {}", n, run.failed_rank, run.failure));
    }
    const auto before = out.allreduce.size();
    add_worker_results(run.result, out);
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
