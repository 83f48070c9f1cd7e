// The model a profile measures and the step it times: the engine's own
// train::TrainStep (the same zoo model, optimizer, bucketed reducer, buffer
// broadcast and non-finite check `tula train` runs), fed one synthetic batch.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include "data/dataset.hpp"
#include "distributed/communicator.hpp"
#include "distributed/reducer_options.hpp"
#include "train/train_step.hpp"

namespace tula::profile {

class AllocationMeter;

// What is profiled: a zoo model on inputs of one shape.
struct ModelTarget {
  std::string model = "small_cnn";
  int64_t channels = 3, height = 32, width = 32;  // the input the model sees
  int64_t classes = 10;
  double dropout = -1;  // small_cnn's dropout, as `tula train --dropout`
  std::string precision = "fp32";  // the steps' precision, as `tula train --precision`
};

// Random inputs and labels of the target's shape: timings do not depend on
// pixel values, and generating them costs nothing measurable.
data::Batch synthetic_batch(const ModelTarget& target, int64_t batch, uint64_t seed);

// One step's times, split as `tula train` reports them.
struct StepTimes {
  double forward_backward_s = 0;  // forward, loss, backward (the engine's compute_s)
  // Zeroing the gradients, the reducer's finish (with no communicator: only
  // its gradient statistics) and the SGD step: per-step work that does not
  // grow with the batch. With a communicator it excludes the finish, whose
  // wait is exposed communication.
  double optimizer_s = 0;
  double exposed_comm_s = 0;   // the reducer's: after backward until averaged
  double comm_busy_s = 0;
  double hidden_fraction = 0;  // share of allreduce time before backward ended
  // Per bucket, in launch order: when it was ready to launch, as a share of
  // forward_backward_s (the engine's reducer's record).
  std::vector<double> bucket_ready_fraction;
  int64_t live_after_forward_bytes = -1;  // with a meter: bytes held when forward ends
};

class TrialModel {
 public:
  // Builds the model (seeded) and a TrainStep over it with SGD (momentum 0.9,
  // weight decay 5e-4: `tula train`'s defaults and its state per parameter)
  // and a reducer over `comm` (null: one worker). Construction is metered to
  // give the static memory. The model and its steps run on `device` (the
  // step moves each batch there, as `tula train`'s does).
  TrialModel(const ModelTarget& target, distributed::Communicator* comm, const distributed::ReducerOptions& buckets,
             torch::Device device = torch::Device(torch::kCPU));

  // One synchronized training step on `batch`. With a meter, records the
  // bytes live at the end of forward (activations saved for backward).
  StepTimes step(const data::Batch& batch, AllocationMeter* meter = nullptr);

  // Forward only, in evaluation mode without gradients (as evaluation runs).
  void evaluate(const std::vector<torch::Tensor>& inputs);

  // Batch norm cannot train on one sample per worker (one value per channel
  // has no variance), so such models start their batch grid at 2.
  bool has_batch_norm() const;
  int64_t parameters() const;
  int64_t gradient_bytes() const;  // fp32 gradients allreduced per step
  // Those bytes in the reducer's buckets, in the order backward fills them.
  std::vector<int64_t> bucket_bytes(const distributed::ReducerOptions& options) const;
  // Measured by the allocation meter: weights and buffers as built, the
  // reducer's gradient buckets, and the momentum buffers the first SGD step
  // allocates (-1 until the first step has run).
  int64_t weight_bytes() const { return weight_bytes_; }
  int64_t gradient_buffer_bytes() const { return gradient_buffer_bytes_; }
  int64_t optimizer_state_bytes() const { return optimizer_state_bytes_; }
  int64_t num_buckets() const { return step_->reducer().num_buckets(); }
  const torch::Device& device() const { return device_; }

 private:
  std::unique_ptr<train::TrainStep> step_;
  distributed::Communicator* comm_ = nullptr;
  torch::Device device_;
  int64_t weight_bytes_ = 0, gradient_buffer_bytes_ = 0, optimizer_state_bytes_ = -1;
};

}  // namespace tula::profile
