#include "profile/trial_model.hpp"

#include <algorithm>
#include <limits>

#include <torch/torch.h>

#include "distributed/bucket_layout.hpp"
#include "models/zoo.hpp"
#include "profile/memory_meter.hpp"

namespace tula::profile {
namespace {

// The rate does not change a step's time; it is small so that no trial step diverges.
constexpr double kTrialLr = 0.01;

// `tula train`'s optimizer defaults, at the trial rate.
optim::OptimizerOptions trial_optimizer() {
  optim::OptimizerOptions o;
  o.name = "sgd";
  o.lr = kTrialLr;
  return o;
}

// A trial never stops on a non-finite step: its time is what is measured.
// It runs at the precision training will.
train::StepOptions trial_step_options(const ModelTarget& target) {
  train::StepOptions o;
  o.max_bad_steps = std::numeric_limits<int64_t>::max();
  o.precision = target.precision;
  return o;
}

}  // namespace

data::Batch synthetic_batch(const ModelTarget& t, int64_t batch, uint64_t seed) {
  torch::manual_seed(seed);
  data::Batch b;
  b.images = torch::randn({batch, t.channels, t.height, t.width});
  b.labels = torch::randint(0, t.classes, {batch}, torch::kLong);
  return b;
}

TrialModel::TrialModel(const ModelTarget& target, distributed::Communicator* comm, const distributed::ReducerOptions& buckets,
                       torch::Device device)
    : comm_(comm), device_(device) {
  torch::manual_seed(0);
  models::ModelOptions options{target.channels, target.classes, std::max(target.height, target.width)};
  options.dropout = target.dropout;
  std::shared_ptr<models::Net> net;
  {
    AllocationMeter meter;
    net = models::make_model(target.model, options);
    weight_bytes_ = meter.live_bytes();
  }
  {
    AllocationMeter meter;
    step_ = std::make_unique<train::TrainStep>(net, trial_optimizer(), /*reference_batch=*/128, trial_step_options(target),
                                               buckets, comm_, device_, /*seed=*/0);
    gradient_buffer_bytes_ = meter.live_bytes();
  }
}

StepTimes TrialModel::step(const data::Batch& batch, AllocationMeter* meter) {
  StepTimes t;
  train::StepProbes probes;
  if (meter) probes.after_forward = [&] { t.live_after_forward_bytes = meter->live_bytes(); };
  // The first step allocates the momentum buffers: that is the optimizer state.
  std::unique_ptr<AllocationMeter> state;
  if (optimizer_state_bytes_ < 0 && meter == nullptr) {
    probes.before_update = [&] { state = std::make_unique<AllocationMeter>(); };
    probes.after_update = [&] {
      optimizer_state_bytes_ = state->live_bytes();
      state.reset();
    };
  }
  const auto r = step_->run([&batch] { return train::FetchedBatch{batch, 0.0}; }, 1, kTrialLr, probes);
  t.forward_backward_s = r.compute_s;
  t.comm_busy_s = r.comm_busy_s;
  t.hidden_fraction = r.comm_hidden_fraction;
  for (const double ready : r.bucket_ready_s) {
    t.bucket_ready_fraction.push_back(r.compute_s > 0 ? std::clamp(ready / r.compute_s, 0.0, 1.0) : 1.0);
  }
  // With one worker the reducer's finish only computes the gradient
  // statistics: per-step work that does not grow with the batch, as the
  // optimizer's is; with workers it is communication left exposed.
  t.exposed_comm_s = comm_ ? r.comm_exposed_s : 0.0;
  t.optimizer_s = r.optimizer_s + (comm_ ? 0.0 : r.comm_exposed_s);
  return t;
}

void TrialModel::evaluate(const std::vector<torch::Tensor>& inputs) {
  torch::NoGradGuard no_grad;
  auto& net = step_->model();
  net.eval();
  for (const auto& x : inputs) {
    auto logits = net.forward(x.to(device_));
    (void)logits.argmax(1).sum().item<int64_t>();  // evaluation reads its predictions back
  }
  net.train();
}

bool TrialModel::has_batch_norm() const {
  for (const auto& b : step_->model().named_buffers()) {
    const auto& name = b.key();
    if (name.size() >= 12 && name.compare(name.size() - 12, 12, "running_mean") == 0) return true;
  }
  return false;
}

int64_t TrialModel::parameters() const { return models::parameter_count(step_->model()); }

int64_t TrialModel::gradient_bytes() const {
  int64_t bytes = 0;
  for (const auto& p : step_->model().parameters()) bytes += p.numel() * static_cast<int64_t>(sizeof(float));
  return bytes;
}

std::vector<int64_t> TrialModel::bucket_bytes(const distributed::ReducerOptions& options) const {
  std::vector<distributed::ParameterSlot> slots;
  for (const auto& p : step_->model().parameters()) slots.push_back({p.numel() * static_cast<int64_t>(sizeof(float))});
  return distributed::bucket_bytes(slots, options);
}

}  // namespace tula::profile
