// One optimizer step of data-parallel training, the only one in Tula: `tula
// train` runs it in its epoch loop and `tula profile` times it in its trials,
// so what the profiler measures is the step training runs.
//
// A step: for each micro-batch, forward, loss and backward, with the bucketed
// reducer averaging gradients across workers behind the last backward; then
// the non-finite check and the optimizer update. Its record splits the time
// the way the performance model does (data wait, compute, exposed
// communication, optimizer). A lone worker's noise probe (StepOptions) also
// reads the gradient after the step's first piece, for the noise scale.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/types.h>

#include "data/dataset.hpp"
#include "distributed/communicator.hpp"
#include "distributed/reducer.hpp"
#include "models/zoo.hpp"
#include "optim/optimizer.hpp"
#include "records/metrics_records.hpp"
#include "train/precision.hpp"
#include "train/train_options.hpp"

namespace tula::train {

// What one step did and how long each part took.
struct StepRecord {
  int64_t step = 0;  // steps done, this one included (1 after the first)
  int64_t local_batch = 0;
  int64_t global_batch = 0;
  int workers = 1;
  double loss = 0.0;  // this worker's mean over its micro-batches
  double lr = 0.0;
  double data_wait_s = 0.0;     // blocked on the batch source
  double compute_s = 0.0;       // inputs to the device, forward, loss, backward
  double comm_exposed_s = 0.0;  // buffer broadcast, and allreduce not hidden behind backward
  double comm_busy_s = 0.0;     // some allreduce in flight
  double comm_hidden_fraction = 0.0;
  // Per bucket, in launch order: seconds from the start of the forward whose
  // backward carried the allreduce until the bucket was launched (the
  // reducer's bucket_ready_seconds).
  std::vector<double> bucket_ready_s;
  double optimizer_s = 0.0;     // zeroing the gradients and the update
  double iter_s = 0.0;          // the whole step
  double local_grad_sq = 0.0;   // mean over workers of |g_local|^2; a noise probe's first piece on one worker
  double global_grad_sq = 0.0;  // |g|^2 of the averaged gradient
  int64_t probe_batch = 0;      // the batch of that first piece where a noise probe measured it (else 0)
  bool skipped = false;         // non-finite gradient: no update
  nlohmann::json optimizer_report;  // what the optimizer decided (e.g. AGS's factors); null if nothing

  // The metrics stream's "iter" record.
  records::IterRecord to_record(int64_t epoch, int64_t step_in_epoch) const;
};

// A micro-batch and how long the source blocked to produce it.
struct FetchedBatch {
  data::Batch batch;
  double wait_s = 0.0;
};
// Called once per micro-batch; throws when the source has run dry.
using NextBatch = std::function<FetchedBatch()>;

// Points inside a step where a caller may look (the profiler meters memory
// there). Each may be empty.
struct StepProbes {
  std::function<void()> after_forward;   // each micro-batch, before its backward
  std::function<void()> before_update;   // after the gradients are averaged
  std::function<void()> after_update;
};

class TrainStep {
 public:
  // Takes the model (already on `device`), builds the optimizer and the
  // reducer over its parameters, and, with a communicator, copies rank 0's
  // parameters and buffers to every worker. `comm` may be null (one worker)
  // and must outlive this object. `reference_batch` is the global batch the
  // optimizer's rate was tuned at.
  TrainStep(std::shared_ptr<models::Net> model, const optim::OptimizerOptions& optimizer, int64_t reference_batch,
            const StepOptions& step, const distributed::ReducerOptions& reducer, distributed::Communicator* comm,
            torch::Device device, uint64_t seed);
  ~TrainStep();
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // Runs one step over `micro_batches` micro-batches from `next` at learning
  // rate `lr`. Throws std::runtime_error after StepOptions::max_bad_steps
  // non-finite steps in a row.
  StepRecord run(const NextBatch& next, int64_t micro_batches, double lr, const StepProbes& probes = {});

  // Steps run so far (skipped ones included); set when resuming.
  int64_t steps() const { return steps_; }
  void restore_steps(int64_t steps) { steps_ = steps; }

  models::Net& model() { return *model_; }
  const models::Net& model() const { return *model_; }
  optim::Optimizer& optimizer() { return *optimizer_; }
  const std::vector<torch::Tensor>& buffers() const { return buffers_; }
  const distributed::GradientReducer& reducer() const { return *reducer_; }
  // Weight and gradient norm of every parameter tensor, for the metrics stream.
  nlohmann::json tensor_norms() const;

 private:
  // |g|^2 of the gradients accumulated so far in this step.
  // Which micro-batch of the step: its index of `count`, whether the step
  // probes the noise scale and whether it is the last (its backward ends
  // the reducer's allreduce).
  struct MicroBatch {
    int64_t index = 0, count = 1;
    bool probe = false, last = false;
  };
  // The parts of run(), each timing what it does into the step's record.
  void forward_backward(const data::Batch& batch, const MicroBatch& at, torch::Tensor& loss_sum, StepRecord& r,
                        const StepProbes& probes);
  void read_totals(const torch::Tensor& loss_sum, distributed::ReduceStats& reduce, StepRecord& r);
  bool skip_if_not_finite(StepRecord& r, int rank);
  void update(StepRecord& r, distributed::ReduceStats& reduce, const StepProbes& probes);
  double gradient_squared_norm() const;
  std::vector<torch::Tensor> params_with_gradients() const;

  std::shared_ptr<models::Net> model_;
  std::vector<std::string> names_;
  std::vector<torch::Tensor> params_, buffers_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<distributed::GradientReducer> reducer_;
  std::unique_ptr<LossScaler> scaler_;  // --precision fp16 only
  distributed::Communicator* comm_;
  StepOptions options_;
  torch::Device device_;
  uint64_t seed_;
  int64_t steps_ = 0;
  int64_t bad_steps_ = 0;  // in a row
};

}  // namespace tula::train
