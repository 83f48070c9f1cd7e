// One worker of the communication trials (`tula profile-worker`, hidden): it
// joins a c10d process group like a `tula train` worker, times allreduce over
// a grid of message sizes, then runs a few real data-parallel steps with the
// bucketed reducer to measure how much communication backward hides. Rank 0
// writes what it measured to a JSON file (temp + rename) that the parent
// `tula profile` reads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profile/trial_model.hpp"

namespace tula::profile {

struct WorkerSpec {
  ModelTarget target;
  std::vector<int64_t> message_bytes;  // allreduce sizes to time
  int allreduce_warmup = 2;
  int allreduce_repeats = 5;
  std::vector<int64_t> overlap_batches;  // per-worker batches of the DDP steps
  int overlap_warmup = 2;
  int overlap_steps = 4;
  int64_t bucket_bytes = 25LL << 20;
  int64_t first_bucket_bytes = 1LL << 20;
  int64_t threads = 0;  // intra-op threads; 0: cores / local workers, as `tula train`
  int rendezvous_timeout_s = 60;
  int collective_timeout_s = 60;
  int deadline_s = 300;      // the worker ends itself (SIGALRM) past this
  std::string result_path;   // where rank 0 writes its results
};

nlohmann::json to_json(const WorkerSpec& s);
// Throws std::invalid_argument naming the field.
WorkerSpec worker_spec_from_json(const nlohmann::json& j);

// Runs this process's part (rank and world from the environment, as the
// launcher sets it). Throws std::runtime_error on any failure; a worker that
// hangs is ended by the communicator's timeouts or the deadline.
void run_comm_worker(const WorkerSpec& spec);

}  // namespace tula::profile
