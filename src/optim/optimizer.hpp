// The optimizer seam. The engine averages gradients across workers, then calls
// step(); an optimizer sees the averaged gradients in each parameter's .grad()
// and the statistics the engine measured this step (gradient noise inputs,
// per-tensor norms), which adaptive methods (LARS, LAMB, AGS) use.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/serialize/archive.h>
#include <torch/types.h>

namespace tula::optim {

// One parameter tensor with the facts optimizers need about it.
struct ParamRef {
  std::string name;
  torch::Tensor param;
  // Biases and batch-norm weights: no weight decay for layer-wise methods
  // (LARS, LAMB) and no trust-ratio adaptation.
  bool is_bias_or_norm = false;
};

// Measured by the engine each step, before step() is called.
struct StepStats {
  int64_t step = 0;
  int64_t global_batch = 0;
  int64_t local_batch = 0;
  int world_size = 1;
  // Mean over workers of |g_local|^2 (per-worker batch) and |g_global|^2
  // (the allreduced gradient over the global batch).
  double local_grad_sq = 0.0;
  double global_grad_sq = 0.0;
  // Per parameter tensor, in parameter order: mean over workers of the local
  // squared gradient norm, and the squared norm of the averaged gradient
  // (empty when not measured).
  std::vector<double> local_grad_sq_per_tensor;
  std::vector<double> global_grad_sq_per_tensor;
  // The same per-tensor norms on the parameters' device (double), where the
  // engine measured them; on a GPU only these are filled, so that an
  // optimizer's step need not wait for a copy to the host.
  torch::Tensor local_grad_sq_device;
  torch::Tensor global_grad_sq_device;
};

class Optimizer {
 public:
  explicit Optimizer(std::vector<ParamRef> params, double lr) : params_(std::move(params)), lr_(lr) {}
  virtual ~Optimizer() = default;
  virtual std::string name() const = 0;
  // Updates the parameters in place from their .grad().
  virtual void step(const StepStats& stats) = 0;
  // The learning rate used by the next step (the schedule sets it each step).
  void set_lr(double lr) { lr_ = lr; }
  double lr() const { return lr_; }
  // Optimizer state (momentum buffers, moments) for checkpoints.
  virtual void save(torch::serialize::OutputArchive& archive) const = 0;
  virtual void load(torch::serialize::InputArchive& archive) = 0;
  // What the last step decided, for the metrics stream (e.g. AGS's factors);
  // null when there is nothing to report.
  virtual nlohmann::json report() const { return nullptr; }
  const std::vector<ParamRef>& params() const { return params_; }

 protected:
  std::vector<ParamRef> params_;
  double lr_;
};

// Whether `update` ("auto", "foreach", "per-tensor") means the multi-tensor
// path for these parameters: auto picks it off the CPU.
bool use_foreach(const std::string& update, const std::vector<ParamRef>& params);

// The parameters that have a gradient this step, as parallel lists.
struct GradLists {
  std::vector<size_t> index;  // into the optimizer's params
  std::vector<torch::Tensor> params, grads;
};
GradLists with_gradients(const std::vector<ParamRef>& params);

// Per-parameter state tensors (momentum, moments) in and out of checkpoints,
// named prefix_i; a loaded tensor must have its parameter's shape.
void save_state(torch::serialize::OutputArchive& archive, const std::string& prefix,
                const std::vector<torch::Tensor>& state);
void load_state(torch::serialize::InputArchive& archive, const std::string& prefix,
                const std::vector<ParamRef>& params, std::vector<torch::Tensor>& state);

}  // namespace tula::optim
