#include "profile/trial_model.hpp"

#include <chrono>

#include <torch/torch.h>

#include "profile/memory_meter.hpp"

namespace tula::profile {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

data::Batch synthetic_batch(const ModelTarget& t, int64_t batch, uint64_t seed) {
  torch::manual_seed(seed);
  data::Batch b;
  b.images = torch::randn({batch, t.channels, t.height, t.width});
  b.labels = torch::randint(0, t.classes, {batch}, torch::kLong);
  return b;
}

TrialModel::TrialModel(const ModelTarget& target, distributed::Communicator* comm, const distributed::ReducerOptions& buckets)
    : comm_(comm) {
  torch::manual_seed(0);
  models::ModelOptions options{target.channels, target.classes, std::max(target.height, target.width)};
  options.dropout = target.dropout;
  {
    AllocationMeter meter;
    net_ = models::make_model(target.model, options);
    weight_bytes_ = meter.live_bytes();
  }
  std::vector<optim::ParamRef> refs;
  for (const auto& named : net_->named_parameters()) {
    params_.push_back(named.value());
    refs.push_back({named.key(), named.value(), named.value().dim() <= 1});
  }
  optim::SGDOptions sgd;
  sgd.lr = 0.01;
  sgd.momentum = 0.9;
  sgd.weight_decay = 5e-4;
  optimizer_ = std::make_unique<optim::SGD>(std::move(refs), sgd);
  {
    AllocationMeter meter;
    reducer_ = std::make_unique<distributed::GradientReducer>(params_, comm_, buckets);
    gradient_buffer_bytes_ = meter.live_bytes();
  }
  net_->train();
}

StepTimes TrialModel::step(const data::Batch& batch, AllocationMeter* meter) {
  StepTimes t;
  const auto t_zero = Clock::now();
  reducer_->zero_grad();
  double optimizer_s = since(t_zero);

  const auto t0 = Clock::now();
  reducer_->begin_backward(true);
  auto loss = torch::nn::functional::cross_entropy(net_->forward(batch.images), batch.labels);
  if (meter) t.live_after_forward_bytes = meter->live_bytes();
  loss.backward();
  (void)loss.item<double>();  // the engine reads the loss inside its compute time
  t.forward_backward_s = since(t0);

  const auto t_finish = Clock::now();
  const auto reduce = reducer_->finish_backward();
  const double finish_s = since(t_finish);
  t.exposed_comm_s = comm_ ? reduce.exposed_comm_seconds : 0.0;
  t.comm_busy_s = reduce.comm_busy_seconds;
  t.hidden_fraction = reduce.hidden_fraction;
  if (!comm_) optimizer_s += finish_s;

  optim::StepStats stats;
  stats.step = steps_;
  stats.local_batch = batch.labels.size(0);
  stats.global_batch = stats.local_batch * (comm_ ? comm_->world_size() : 1);
  stats.world_size = comm_ ? comm_->world_size() : 1;
  stats.local_grad_sq = reduce.local_grad_sq;
  stats.global_grad_sq = reduce.global_grad_sq;
  stats.local_grad_sq_per_tensor = reduce.local_grad_sq_per_tensor;
  const auto t_opt = Clock::now();
  if (steps_ == 0 && meter == nullptr) {
    // The first step allocates the momentum buffers: that is the optimizer state.
    AllocationMeter state;
    optimizer_->step(stats);
    optimizer_state_bytes_ = state.live_bytes();
  } else {
    optimizer_->step(stats);
  }
  optimizer_s += since(t_opt);
  t.optimizer_s = optimizer_s;
  ++steps_;
  return t;
}

void TrialModel::evaluate(const std::vector<torch::Tensor>& inputs) {
  torch::NoGradGuard no_grad;
  net_->eval();
  for (const auto& x : inputs) {
    auto logits = net_->forward(x);
    (void)logits.argmax(1).sum().item<int64_t>();  // evaluation reads its predictions back
  }
  net_->train();
}

bool TrialModel::has_batch_norm() const {
  for (const auto& b : net_->named_buffers()) {
    const auto& name = b.key();
    if (name.size() >= 12 && name.compare(name.size() - 12, 12, "running_mean") == 0) return true;
  }
  return false;
}

int64_t TrialModel::parameters() const { return models::parameter_count(*net_); }

int64_t TrialModel::gradient_bytes() const {
  int64_t bytes = 0;
  for (const auto& p : params_) bytes += p.numel() * static_cast<int64_t>(sizeof(float));
  return bytes;
}

}  // namespace tula::profile
