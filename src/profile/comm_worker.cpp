#include "profile/comm_worker.hpp"

#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include <torch/torch.h>

#include "common/atomic_file.hpp"
#include "common/stopwatch.hpp"
#include "distributed/communicator.hpp"
#include "distributed/rendezvous.hpp"

namespace tula::profile {
namespace {

using common::Clock;
using common::since;
using nlohmann::json;

template <typename T>
T field(const json& j, const char* key) {
  if (!j.contains(key)) throw std::invalid_argument(std::string("worker spec: ") + key + ": missing");
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    throw std::invalid_argument(std::string("worker spec: ") + key + ": wrong type");
  }
}

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

json to_json(const WorkerSpec& s) {
  return {{"model", s.target.model},
          {"input_shape", {s.target.channels, s.target.height, s.target.width}},
          {"classes", s.target.classes},
          {"dropout", s.target.dropout},
          {"message_bytes", s.message_bytes},
          {"allreduce_warmup", s.allreduce_warmup},
          {"allreduce_repeats", s.allreduce_repeats},
          {"overlap_batches", s.overlap_batches},
          {"overlap_warmup", s.overlap_warmup},
          {"overlap_steps", s.overlap_steps},
          {"bucket_bytes", s.bucket_bytes},
          {"first_bucket_bytes", s.first_bucket_bytes},
          {"threads", s.threads},
          {"rendezvous_timeout_s", s.rendezvous_timeout_s},
          {"collective_timeout_s", s.collective_timeout_s},
          {"deadline_s", s.deadline_s},
          {"result_path", s.result_path}};
}

WorkerSpec worker_spec_from_json(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("worker spec: must be a JSON object");
  WorkerSpec s;
  s.target.model = field<std::string>(j, "model");
  const auto shape = field<std::vector<int64_t>>(j, "input_shape");
  if (shape.size() != 3) throw std::invalid_argument("worker spec: input_shape: expected [C, H, W]");
  s.target.channels = shape[0];
  s.target.height = shape[1];
  s.target.width = shape[2];
  s.target.classes = field<int64_t>(j, "classes");
  s.target.dropout = field<double>(j, "dropout");
  s.message_bytes = field<std::vector<int64_t>>(j, "message_bytes");
  s.allreduce_warmup = field<int>(j, "allreduce_warmup");
  s.allreduce_repeats = field<int>(j, "allreduce_repeats");
  s.overlap_batches = field<std::vector<int64_t>>(j, "overlap_batches");
  s.overlap_warmup = field<int>(j, "overlap_warmup");
  s.overlap_steps = field<int>(j, "overlap_steps");
  s.bucket_bytes = field<int64_t>(j, "bucket_bytes");
  s.first_bucket_bytes = field<int64_t>(j, "first_bucket_bytes");
  s.threads = field<int64_t>(j, "threads");
  s.rendezvous_timeout_s = field<int>(j, "rendezvous_timeout_s");
  s.collective_timeout_s = field<int>(j, "collective_timeout_s");
  s.deadline_s = field<int>(j, "deadline_s");
  s.result_path = field<std::string>(j, "result_path");
  if (s.allreduce_repeats < 1 || s.overlap_steps < 1) throw std::invalid_argument("worker spec: repeats must be >= 1");
  return s;
}

void run_comm_worker(const WorkerSpec& s) {
  const auto rdv = distributed::rendezvous_from_environment();
  if (rdv.world_size < 2) throw std::runtime_error("profile-worker: needs WORLD_SIZE >= 2 (run by `tula profile`)");
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = s.threads > 0 ? s.threads : std::max<int64_t>(1, cores / rdv.local_world_size);
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
  if (rdv.rank == 0) common::write_file_atomically(s.result_path, result.dump(2) + "\n");
}

}  // namespace tula::profile
