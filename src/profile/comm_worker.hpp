// One rank of the communication trials, a thread of the profiling process: it
// joins a c10d process group over loopback TCP as a `tula train` worker would
// (Gloo, the same store and timeouts), times allreduce over a grid of message
// sizes, then runs a few real data-parallel steps with the bucketed reducer to
// measure how much communication backward hides. Threads rather than
// processes: a worker process took 0.4-0.5 s on this 2-core machine to load
// LibTorch before its first line (`tula --version` with GOMP_SPINCOUNT set,
// as a child of `tula` has it: 0.43-0.48 s), where the trials take about
// 0.3 s for LeNet-5 and 0.8 s for small_cnn.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed/rendezvous.hpp"
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
  int64_t threads = 0;  // intra-op threads of each rank; 0: cores / ranks, as `tula train` gives each worker
  int rendezvous_timeout_s = 60;
  int collective_timeout_s = 60;
};

// Runs rank `rdv.rank` of `rdv.world_size` on the calling thread, with
// `threads` intra-op threads (the caller restores its own afterwards), and
// returns what it measured; rank 0's document is the run's result. Throws
// std::runtime_error on any failure; a peer that stops answering ends the
// rank within the communicator's timeouts.
nlohmann::json run_comm_rank(const WorkerSpec& spec, const distributed::RendezvousInfo& rdv, int64_t threads);

}  // namespace tula::profile
