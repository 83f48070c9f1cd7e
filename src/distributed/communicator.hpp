// The collectives the engine needs, over a c10d process group: Gloo on CPU
// tensors, NCCL when LibTorch has CUDA and the tensors live on a GPU. c10d's
// headers stay inside communicator.cpp.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "distributed/communicator_options.hpp"
#include "distributed/rendezvous.hpp"

namespace tula::distributed {

// A collective started and not yet waited for.
class PendingWork {
 public:
  virtual ~PendingWork() = default;
  // Blocks until done; throws on failure or timeout.
  virtual void wait() = 0;
  // Runs `callback` (on a communication thread) when the collective
  // completes. On CUDA tensors that is when it is queued (NCCL completes its
  // future at once), with the device's current stream waiting on the
  // collective's end: a mark on that stream (stream_mark.hpp) is reached when
  // the collective is done, where the host clock is not.
  virtual void on_complete(std::function<void()> callback) = 0;
};

class Communicator {
 public:
  // Joins the rendezvous described by `info` (rank 0 hosts the TCPStore on
  // master_addr:master_port). Throws std::runtime_error naming the address on
  // a port in use, or when not all workers arrive within the timeout.
  static std::unique_ptr<Communicator> connect(const RendezvousInfo& info,
                                               const CommunicatorOptions& options = {});
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;
  // Where the tensors handed to the collectives must live (NCCL: a GPU).
  virtual torch::Device device() const = 0;
  // In-place sum across workers.
  virtual std::shared_ptr<PendingWork> allreduce_async(torch::Tensor tensor) = 0;
  void allreduce(torch::Tensor tensor) { allreduce_async(std::move(tensor))->wait(); }
  virtual void broadcast(torch::Tensor tensor, int root) = 0;
  virtual void barrier() = 0;
  // Sums a few numbers across workers (losses, counts): they travel as one
  // float64 tensor on device(), whatever the backend.
  std::vector<double> sum(const std::vector<double>& values);
};

}  // namespace tula::distributed
