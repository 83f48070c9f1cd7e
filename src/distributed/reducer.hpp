// Bucketed gradient averaging overlapped with backward, as PyTorch DDP does.
//
// Parameters are grouped, in reverse registration order (the order backward
// produces their gradients), into buckets of about `bucket_bytes`. Each
// parameter's .grad() is made a view into its bucket's flat buffer, so
// autograd accumulates gradients straight into the buffer. A post-hook on each
// parameter's gradient accumulator marks it ready; when every parameter of a
// bucket is ready the bucket's allreduce starts, while backward goes on with
// the next layers. Buckets are launched in index order on every worker, as
// collectives must be issued in the same order everywhere.
//
// Each bucket carries one extra float per tensor, filled with that tensor's
// local squared gradient norm just before the allreduce: the sum over workers
// arrives with the gradients, so the gradient-noise statistics cost no extra
// collective.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <torch/types.h>

#include "distributed/communicator.hpp"
#include "distributed/reducer_options.hpp"

namespace tula::distributed {

// What one synchronized backward measured.
struct ReduceStats {
  double exposed_comm_seconds = 0.0;  // from backward's end until gradients were averaged
  double comm_busy_seconds = 0.0;     // time some allreduce was in flight
  double hidden_fraction = 0.0;       // share of comm_busy_seconds before backward ended
  // Per bucket, in launch order: seconds from begin_backward() until the
  // bucket was launched (all its gradients ready and every earlier bucket
  // launched). Where in the step each allreduce can start: with the bucket
  // sizes, what the overlap hides (predict/overlap_model.hpp).
  std::vector<double> bucket_ready_seconds;
  // Squared gradient norms: local ones averaged over workers (batch b each),
  // global one of the averaged gradient (batch N*b). Per tensor, in the order
  // of the parameters passed to the reducer. The host fields are filled on the
  // CPU only; the device tensors (double, one entry per tensor) always.
  double local_grad_sq = 0.0;
  double global_grad_sq = 0.0;
  std::vector<double> local_grad_sq_per_tensor;
  std::vector<double> global_grad_sq_per_tensor;
  torch::Tensor local_grad_sq_device;
  torch::Tensor global_grad_sq_device;
};

class GradientReducer {
 public:
  // `comm` may be null (one worker): then only the statistics are computed.
  GradientReducer(std::vector<torch::Tensor> params, Communicator* comm, ReducerOptions options = {});
  ~GradientReducer();
  GradientReducer(const GradientReducer&) = delete;
  GradientReducer& operator=(const GradientReducer&) = delete;

  // Zeroes the gradient buffers (the .grad() views stay in place).
  void zero_grad();
  // Call before each forward whose backward it overlaps. With synchronize=false (all but the last
  // micro-step of gradient accumulation) gradients only accumulate locally.
  void begin_backward(bool synchronize);
  // Call after backward: starts any bucket not yet started (parameters unused
  // in this forward contribute zeros), waits for all, and leaves the averaged
  // gradient in every .grad().
  ReduceStats finish_backward();

  int64_t num_buckets() const;
  // Parameter indices of each bucket, in launch order.
  std::vector<std::vector<int64_t>> bucket_layout() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Copies rank 0's values of `tensors` (parameters and buffers) to every worker
// with one broadcast of a flattened copy.
void broadcast_from_rank0(Communicator& comm, const std::vector<torch::Tensor>& tensors);

}  // namespace tula::distributed
