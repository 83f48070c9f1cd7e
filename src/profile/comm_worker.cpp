#include "profile/comm_worker.hpp"

#include <chrono>
#include <stdexcept>

#include <torch/torch.h>

#include "common/stopwatch.hpp"
#include "distributed/communicator.hpp"

namespace tula::profile {
namespace {

using common::Clock;
using common::since;
using nlohmann::json;

json time_allreduce(distributed::Communicator& comm, const WorkerSpec& s) {
  // Zeros: the sums stay finite however often they are reduced.
  std::vector<torch::Tensor> tensors;
  for (const int64_t bytes : s.message_bytes) {
    const auto on_device = torch::TensorOptions(torch::kFloat).device(comm.device());
    tensors.push_back(torch::zeros({std::max<int64_t>(1, bytes / 4)}, on_device));
    for (int i = 0; i < s.allreduce_warmup; ++i) comm.allreduce(tensors.back());
  }
  // Repeats go round the sizes rather than size by size, so a burst of load
  // from elsewhere on the machine lands on every size alike instead of
  // bending the time-versus-size line the fit reads the bandwidth from.
  std::vector<std::vector<double>> seconds(tensors.size());
  for (int i = 0; i < s.allreduce_repeats; ++i) {
    for (size_t k = 0; k < tensors.size(); ++k) {
      comm.barrier();  // start together, so each time is the collective's, not a late peer's
      const auto t0 = Clock::now();
      comm.allreduce(tensors[k]);
      seconds[k].push_back(since(t0));
    }
  }
  json rows = json::array();
  for (size_t k = 0; k < tensors.size(); ++k) {
    rows.push_back({{"bytes", s.message_bytes[k]}, {"seconds", seconds[k]}});
  }
  return rows;
}

json time_overlap(distributed::Communicator& comm, const WorkerSpec& s) {
  json rows = json::array();
  if (s.overlap_batches.empty()) return rows;
  distributed::ReducerOptions buckets{s.bucket_bytes, s.first_bucket_bytes};
  TrialModel model(s.target, &comm, buckets);
  for (const int64_t b : s.overlap_batches) {
    const auto batch = synthetic_batch(s.target, b, 100 + static_cast<uint64_t>(comm.rank()));
    for (int i = 0; i < s.overlap_warmup; ++i) model.step(batch);
    std::vector<double> fb, exposed, busy, hidden, step;
    for (int i = 0; i < s.overlap_steps; ++i) {
      const auto t = model.step(batch);
      fb.push_back(t.forward_backward_s);
      exposed.push_back(t.exposed_comm_s);
      busy.push_back(t.comm_busy_s);
      hidden.push_back(t.hidden_fraction);
      // As the engine's metrics: compute_s + comm_exposed_s.
      step.push_back(t.forward_backward_s + t.exposed_comm_s);
    }
    // Each step waits for the slowest rank, so its forward+backward is the
    // contention this worker count causes. Rank 0's own time under-reads it
    // when workers outnumber cores and time-share them (rank 0 can finish
    // early while the others still compute). Gathered by a sum over a
    // zero-filled [ranks, steps] tensor, each rank writing its own row.
    auto all = torch::zeros({comm.world_size(), static_cast<int64_t>(fb.size())},
                            torch::TensorOptions(torch::kDouble).device(comm.device()));
    all[comm.rank()].copy_(torch::tensor(fb, torch::kDouble));
    comm.allreduce(all);
    const auto slowest = std::get<0>(all.max(0)).cpu();
    for (size_t i = 0; i < fb.size(); ++i) fb[i] = slowest[static_cast<int64_t>(i)].item<double>();
    rows.push_back({{"batch_per_worker", b},
                    {"forward_backward_s", fb},
                    {"exposed_comm_s", exposed},
                    {"comm_busy_s", busy},
                    {"hidden_fraction", hidden},
                    {"step_s", step},
                    {"buckets", model.num_buckets()}});
  }
  return rows;
}

}  // namespace

json run_comm_rank(const WorkerSpec& s, const distributed::RendezvousInfo& rdv, int64_t threads) {
  torch::set_num_threads(static_cast<int>(threads));
  distributed::CommunicatorOptions c;
  c.rendezvous_timeout = std::chrono::seconds(s.rendezvous_timeout_s);
  c.collective_timeout = std::chrono::seconds(s.collective_timeout_s);
  c.backend = "gloo";
  auto comm = distributed::Communicator::connect(rdv, c);

  json result = {{"workers", rdv.world_size}, {"workers_per_node", rdv.local_world_size}, {"threads", threads}};
  result["allreduce"] = time_allreduce(*comm, s);
  result["overlap"] = time_overlap(*comm, s);
  comm->barrier();  // nobody tears down the group while another still reduces
  return result;
}

}  // namespace tula::profile
