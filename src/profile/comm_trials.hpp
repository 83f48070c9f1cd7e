// The communication trials: for each worker count it runs that many ranks
// (profile/comm_worker.hpp) as threads of this process over loopback, waits
// for them and turns rank 0's results into the profile's allreduce, overlap
// and contention samples.
#pragma once
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
  WorkerSpec spec;               // what every rank measures
  std::string master_addr = "127.0.0.1";
  int master_port = 0;           // 0: a free port is picked for each run
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
  nlohmann::json raw = nlohmann::json::array();  // each run's result document as rank 0 returned it
};

// Throws std::runtime_error naming the worker count, the failed rank and how
// it failed. The intra-op thread count of the calling thread is restored.
CommTrialResult run_comm_trials(const CommTrialOptions& options, const Log& log);

// Turns one run's result document into samples (exposed for tests).
void add_worker_results(const nlohmann::json& result, CommTrialResult& out);

}  // namespace tula::profile
