// Validation of the LibTorch-free option structs of this part.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "distributed/communicator_options.hpp"
#include "distributed/reducer_options.hpp"

namespace tula::distributed {

void CommunicatorOptions::validate() const {
  if (rendezvous_timeout < std::chrono::seconds(1) || collective_timeout < std::chrono::seconds(1)) {
    throw std::invalid_argument("--rendezvous-timeout and --collective-timeout must be at least 1 s");
  }
  if (backend != "auto" && backend != "gloo" && backend != "nccl") {
    throw std::invalid_argument("unknown --backend '" + backend + "' (auto, gloo, nccl)");
  }
  if (backend == "nccl" && !use_cuda) {
    throw std::invalid_argument("--backend nccl moves only CUDA tensors: it needs --device cuda");
  }
  if (cuda_device < 0) throw std::invalid_argument("the CUDA device index must be >= 0");
}

void CommunicatorOptions::require_gpu_per_nccl_worker(int local_workers, int visible_gpus) const {
  const bool nccl = backend == "nccl" || (backend == "auto" && use_cuda);
  if (!nccl || local_workers <= visible_gpus) return;
  throw std::invalid_argument(fmt::format("--backend {}{} needs a GPU per worker: {} workers on this node, {} GPU(s) "
                                          "visible; use --backend gloo to share a GPU, or at most {} worker(s) per node",
                                          backend, backend == "auto" ? " (NCCL on CUDA)" : "", local_workers,
                                          visible_gpus, visible_gpus));
}

void ReducerOptions::validate() const {
  if (bucket_bytes <= 0 || first_bucket_bytes <= 0) {
    throw std::invalid_argument("--bucket-mb and --first-bucket-mb must be positive");
  }
}

}  // namespace tula::distributed
