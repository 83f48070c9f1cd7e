// How a worker joins its peers and how long it waits for them. Plain data, no
// LibTorch, so option parsers and planners can build it.
#pragma once
#include <chrono>
#include <string>

namespace tula::distributed {

struct CommunicatorOptions {
  // How long to wait for all workers to join the rendezvous, and for any one
  // collective: a dead or missing worker turns into an error, not a hang.
  std::chrono::milliseconds rendezvous_timeout{std::chrono::seconds(120)};
  std::chrono::milliseconds collective_timeout{std::chrono::seconds(300)};
  std::string backend = "auto";  // "gloo", "nccl", "auto" (nccl for CUDA devices)
  // The device whose tensors the collectives move; the communicator allocates
  // its own scratch tensors there too (NCCL accepts only CUDA tensors).
  bool use_cuda = false;
  int cuda_device = 0;  // with use_cuda: the local GPU index (LOCAL_RANK)

  // Throws std::invalid_argument naming the option.
  void validate() const;
  // NCCL runs one rank per GPU and fails inside its set-up, in its own words,
  // when two share one: throws std::invalid_argument saying so (and that Gloo
  // can share a GPU) when NCCL would carry `local_workers` ranks on fewer GPUs.
  void require_gpu_per_nccl_worker(int local_workers, int visible_gpus) const;
};

}  // namespace tula::distributed
