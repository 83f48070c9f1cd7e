// The parent side of the communication trials: for each worker count it
// starts that many `tula profile-worker` processes on this machine (loopback,
// through the same launcher as `tula train --nproc`), waits for them and turns
// rank 0's results into the profile's allreduce, overlap and contention
// samples.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/profile.hpp"
#include "profile/comm_worker.hpp"
#include "profile/compute_trials.hpp"

namespace tula::profile {

struct CommTrialOptions {
  std::vector<int64_t> workers;  // worker counts, each >= 2
  WorkerSpec spec;               // what every worker measures (result_path is set per run)
  std::string executable;        // the `tula` binary; empty: this process's own
  std::string master_addr = "127.0.0.1";
  int master_port = 0;           // 0: a free port is picked for each run
  std::chrono::milliseconds kill_grace{std::chrono::seconds(3)};
  // Asked before each worker count after the first: "" to go on, or why the
  // remaining counts are left out (the time budget).
  std::function<std::string(int64_t next_workers)> stop_before;
};

struct CommTrialResult {
  std::vector<std::string> notes;  // worker counts left out, and why
  std::vector<predict::AllreduceSample> allreduce;
  std::vector<predict::OverlapSample> overlap;
  // Forward+backward with N workers busy on this node: the contention samples.
  std::vector<predict::ComputeSample> contention;
  nlohmann::json raw = nlohmann::json::array();  // each run's result document as the workers wrote it
};

// Throws std::runtime_error naming the worker count, the failed rank and how
// it failed (a worker past its deadline is killed by SIGALRM).
CommTrialResult run_comm_trials(const CommTrialOptions& options, const Log& log);

// Turns one run's result document into samples (exposed for tests).
void add_worker_results(const nlohmann::json& result, CommTrialResult& out);

}  // namespace tula::profile
