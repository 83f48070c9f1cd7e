#include "train/train_step.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/stopwatch.hpp"
#include "data/rng.hpp"
#include "kernels/squared_norm.hpp"
#include "optim/make_optimizer.hpp"
#include "train/metrics.hpp"

namespace tula::train {
namespace {

using common::Clock;
using common::since;

// Device work is asynchronous on a GPU: wait for it, so a timer around it
// measures the work and not its launch.
void sync_device(const torch::Device& device) {
#ifdef TULA_HAVE_CUDA
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
#else
  (void)device;
#endif
}

constexpr int64_t kDeviceReportEvery = 10;

std::vector<optim::ParamRef> param_refs(const std::vector<std::string>& names, const std::vector<torch::Tensor>& params) {
  std::vector<optim::ParamRef> refs;
  for (size_t i = 0; i < params.size(); ++i) refs.push_back({names[i], params[i], params[i].dim() <= 1});
  return refs;
}

}  // namespace

records::IterRecord StepRecord::to_record(int64_t epoch, int64_t step_in_epoch) const {
  records::IterRecord r;
  r.epoch = epoch;
  r.step = step;
  r.step_in_epoch = step_in_epoch;
  r.global_batch = global_batch;
  r.workers = workers;
  r.loss = loss;
  r.lr = lr;
  r.times.data_wait_s = data_wait_s;
  r.times.compute_s = compute_s;
  r.times.comm_exposed_s = comm_exposed_s;
  r.times.comm_busy_s = comm_busy_s;
  r.times.comm_hidden_fraction = comm_hidden_fraction;
  r.times.optimizer_s = optimizer_s;
  r.times.iter_s = iter_s;
  r.times.samples_per_s = iter_s > 0 ? static_cast<double>(global_batch) / iter_s : 0.0;
  r.local_grad_sq = local_grad_sq;
  r.global_grad_sq = global_grad_sq;
  r.probe_batch = probe_batch;
  r.peak_rss_bytes = peak_rss_bytes();
  r.skipped = skipped;
  if (optimizer_report.is_object()) r.optimizer_terms = optimizer_report;
  return r;
}

TrainStep::TrainStep(std::shared_ptr<models::Net> model, const optim::OptimizerOptions& optimizer,
                     int64_t reference_batch, const StepOptions& step, const distributed::ReducerOptions& reducer,
                     distributed::Communicator* comm, torch::Device device, uint64_t seed)
    : model_(std::move(model)), comm_(comm), options_(step), device_(device), seed_(seed) {
  options_.validate();
  { AutocastScope refuse_early(options_.precision, device_); }  // throws, naming why, where it cannot run
  for (const auto& named : model_->named_parameters()) {
    names_.push_back(named.key());
    params_.push_back(named.value());
  }
  if (options_.channels_last) {  // before the reducer makes the gradients views of its buckets
    torch::NoGradGuard no_grad;
    for (auto& p : params_) {
      if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
  if (options_.precision == "fp16") scaler_ = std::make_unique<LossScaler>(device_);
  for (const auto& b : model_->buffers()) buffers_.push_back(b);
  if (comm_) {  // the same initial weights on every worker
    auto state = params_;
    state.insert(state.end(), buffers_.begin(), buffers_.end());
    distributed::broadcast_from_rank0(*comm_, state);
  }
  optimizer_ = optim::make_optimizer(param_refs(names_, params_), optimizer, reference_batch);
  reducer_ = std::make_unique<distributed::GradientReducer>(params_, comm_, reducer);
  model_->train();
}

TrainStep::~TrainStep() = default;

// One optimizer step read top to bottom: each phase (data, forward and
// backward with the overlapped allreduce, the exposed wait, the one read
// from the device, the update) is timed where it happens, by the part that
// does it, into the step's record.
StepRecord TrainStep::run(const NextBatch& next, int64_t micro_batches, double lr, const StepProbes& probes) {
  if (micro_batches < 1) throw std::invalid_argument("a step needs at least one micro-batch");
  const auto start = Clock::now();
  const int rank = comm_ ? comm_->rank() : 0;
  StepRecord r;
  r.workers = comm_ ? comm_->world_size() : 1;
  r.lr = lr;
  // Dropout draws depend on (seed, step, rank) only, so a resumed run repeats them.
  torch::manual_seed(data::mix(data::mix(seed_, static_cast<uint64_t>(steps_)), 1000003ULL + rank));
  optimizer_->set_lr(lr);

  const auto zero_start = Clock::now();
  reducer_->zero_grad();
  r.optimizer_s = since(zero_start);

  distributed::ReduceStats reduce;
  // The loss stays on the device until the step's one read (read_totals).
  auto loss_sum = torch::zeros({}, torch::TensorOptions(torch::kDouble).device(device_));
  const bool probe = r.workers == 1 && options_.noise_probe_every > 0 && steps_ % options_.noise_probe_every == 0;
  for (int64_t micro = 0; micro < micro_batches; ++micro) {
    auto fetched = next();
    r.data_wait_s += fetched.wait_s;
    if (comm_ && options_.broadcast_buffers && micro == 0 && !buffers_.empty()) {
      const auto t = Clock::now();
      distributed::broadcast_from_rank0(*comm_, buffers_);
      r.comm_exposed_s += since(t);
    }
    const bool last = micro == micro_batches - 1;
    forward_backward(fetched.batch, {micro, micro_batches, probe, last}, loss_sum, r, probes);
    if (last) reduce = reducer_->finish_backward();
  }
  if (scaler_) {  // the averaged gradients and their norms, unscaled on the device
    scaler_->unscale(params_with_gradients());
    auto inverse_square = scaler_->scale().reciprocal().square();
    reduce.local_grad_sq_device.mul_(inverse_square);
    reduce.global_grad_sq_device.mul_(inverse_square);
  }
  read_totals(loss_sum, reduce, r);
  ++steps_;
  r.step = steps_;
  if (scaler_) scaler_->update();  // halves the scale after an overflow, grows it after a run of good steps
  if (!skip_if_not_finite(r, rank)) update(r, reduce, probes);
  r.iter_s = since(start);
  return r;
}

// One micro-batch's forward and backward (its gradient added, its share of
// the step's loss summed on the device), timed as the step's compute. A
// noise probe reads the gradient after the step's first piece: its first
// micro-batch, or the first half of a lone one (each piece's loss weighted
// by its share of the step's samples, so the step's gradient is unchanged).
void TrainStep::forward_backward(const data::Batch& batch, const MicroBatch& at, torch::Tensor& loss_sum,
                                 StepRecord& r, const StepProbes& probes) {
  const auto compute_start = Clock::now();
  auto images = batch.images.to(device_, /*non_blocking=*/true);
  auto labels = batch.labels.to(device_, /*non_blocking=*/true);
  if (options_.channels_last && images.dim() == 4) images = images.contiguous(torch::MemoryFormat::ChannelsLast);
  const int64_t samples = labels.size(0);
  r.local_batch += samples;
  const int64_t split = at.probe && at.count == 1 && samples >= 2 ? samples / 2 : samples;
  for (int64_t begin = 0; begin < samples;) {
    const int64_t size = begin == 0 ? split : samples - split;
    reducer_->begin_backward(at.last && begin + size == samples);
    torch::Tensor loss;
    {
      AutocastScope autocast(options_.precision, device_);  // forward and loss; backward follows the forward's types
      loss = torch::nn::functional::cross_entropy(model_->forward(images.narrow(0, begin, size)),
                                                  labels.narrow(0, begin, size));
    }
    if (probes.after_forward) probes.after_forward();
    const double share = static_cast<double>(size) / static_cast<double>(samples * at.count);
    if (scaler_) {
      (loss * share * scaler_->scale().squeeze()).backward();
    } else {
      (loss * share).backward();
    }
    loss_sum.add_(loss.detach().to(torch::kDouble), share);
    if (at.probe && at.index == 0 && begin == 0 && (at.count > 1 || split < samples)) {
      const double scale = scaler_ ? scaler_->value() : 1.0;
      r.local_grad_sq = gradient_squared_norm() / (share * share * scale * scale);
      r.probe_batch = size;
    }
    begin += size;
  }
  sync_device(device_);
  r.compute_s += since(compute_start);
}

// The step's one read from the device: the loss and the gradient norms the
// skip decision and the record need, in one copy (on a GPU the reducer
// leaves them there; on the CPU they are already on the host). With it, the
// reducer's timings into the record.
void TrainStep::read_totals(const torch::Tensor& loss_sum, distributed::ReduceStats& reduce, StepRecord& r) {
  if (device_.is_cpu()) {
    r.loss = loss_sum.item<double>();
  } else {
    auto totals = torch::stack({loss_sum, reduce.local_grad_sq_device.sum(), reduce.global_grad_sq_device.sum()})
                      .to(torch::kCPU);
    auto t = totals.accessor<double, 1>();
    r.loss = t[0];
    reduce.local_grad_sq = t[1];
    reduce.global_grad_sq = t[2];
  }
  r.comm_exposed_s += reduce.exposed_comm_seconds;
  r.comm_busy_s = reduce.comm_busy_seconds;
  r.comm_hidden_fraction = reduce.hidden_fraction;
  r.bucket_ready_s = std::move(reduce.bucket_ready_seconds);
  if (r.probe_batch == 0) r.local_grad_sq = reduce.local_grad_sq;
  r.global_grad_sq = reduce.global_grad_sq;
  r.global_batch = r.local_batch * r.workers;
}

// Whether the step is skipped: the averaged gradient's norm is the same on
// every worker, so all of them skip together; a worker's own loss is not, so
// it does not decide (a non-finite loss makes the gradient non-finite anyway,
// on every worker once averaged). Throws after max_bad_steps in a row.
bool TrainStep::skip_if_not_finite(StepRecord& r, int rank) {
  r.skipped = !std::isfinite(r.global_grad_sq);
  if (!r.skipped) {
    bad_steps_ = 0;
    return false;
  }
  // fp16's overflows are how the loss scale finds its level: such a step is
  // skipped but counts as bad only once the scale has fallen below 1.
  if (scaler_ && scaler_->value() >= 1.0) {
    if (rank == 0) spdlog::debug("step {}: fp16 gradients overflowed; step skipped, loss scale lowered", steps_);
    return true;
  }
  ++bad_steps_;
  if (rank == 0) {
    spdlog::warn("step {}: non-finite gradient; step skipped ({} in a row, stopping at {})", steps_, bad_steps_,
                 options_.max_bad_steps);
  }
  if (bad_steps_ >= options_.max_bad_steps) {
    throw std::runtime_error(
        fmt::format("stopping: non-finite gradients in {} steps in a row (at step {}); lower --lr or check the data",
                    bad_steps_, steps_));
  }
  return true;
}

// The optimizer's update from the averaged gradients, timed as the step's optimizer time.
void TrainStep::update(StepRecord& r, distributed::ReduceStats& reduce, const StepProbes& probes) {
  optim::StepStats stats;
  stats.step = steps_ - 1;
  stats.local_batch = r.local_batch;
  stats.global_batch = r.global_batch;
  stats.world_size = r.workers;
  stats.local_grad_sq = reduce.local_grad_sq;
  stats.global_grad_sq = reduce.global_grad_sq;
  stats.local_grad_sq_per_tensor = std::move(reduce.local_grad_sq_per_tensor);
  stats.global_grad_sq_per_tensor = std::move(reduce.global_grad_sq_per_tensor);
  stats.local_grad_sq_device = reduce.local_grad_sq_device;
  stats.global_grad_sq_device = reduce.global_grad_sq_device;
  if (probes.before_update) probes.before_update();
  const auto update_start = Clock::now();
  optimizer_->step(stats);
  // No wait for the device here: the host goes on to launch the next step's
  // work while the update runs. On a GPU optimizer_s is therefore the time to
  // launch the update; the update itself lands in the next step's compute
  // (iter_s over steps is still the step's time).
  r.optimizer_s += since(update_start);
  if (probes.after_update) probes.after_update();
  // What the optimizer decided is read from the device every
  // kDeviceReportEvery steps on a GPU (each read waits for the device).
  if (device_.is_cpu() || steps_ % kDeviceReportEvery == 1) r.optimizer_report = optimizer_->report();
}

std::vector<torch::Tensor> TrainStep::params_with_gradients() const {
  std::vector<torch::Tensor> grads;
  for (const auto& p : params_) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads;
}

double TrainStep::gradient_squared_norm() const {
  torch::NoGradGuard no_grad;
  if (!device_.is_cpu()) {  // one read for all tensors
    std::vector<torch::Tensor> grads;
    for (const auto& p : params_) {
      if (p.grad().defined()) grads.push_back(p.grad());
    }
    return grads.empty() ? 0.0 : kernels::squared_norms(grads).to(torch::kDouble).sum().item<double>();
  }
  double sum = 0.0;
  for (const auto& p : params_) {
    if (p.grad().defined()) sum += kernels::squared_norm(p.grad());
  }
  return sum;
}

nlohmann::json TrainStep::tensor_norms() const {
  nlohmann::json rows = nlohmann::json::array();
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    rows.push_back({{"name", names_[i]},
                    {"weight_norm", params_[i].norm().item<double>()},
                    {"grad_norm", params_[i].grad().defined() ? params_[i].grad().norm().item<double>() : 0.0}});
  }
  return rows;
}

}  // namespace tula::train
