#include "distributed/reducer.hpp"

#include "distributed/bucket_layout.hpp"

#include "common/stopwatch.hpp"
#include "kernels/squared_norm.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>

#include <fmt/format.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

namespace tula::distributed {
namespace {

using common::Clock;
using common::seconds_between;

struct Bucket {
  std::vector<int64_t> params;  // indices into Impl::params
  torch::Tensor buffer;         // [gradients..., one squared norm per tensor]
  int64_t grad_numel = 0;
  int64_t pending = 0;          // parameters not yet ready in this backward
  bool launched = false;
  std::shared_ptr<PendingWork> work;
  Clock::time_point launch_time;
  Clock::time_point done_time;
  std::atomic<bool> done{false};
};

}  // namespace

struct GradientReducer::Impl {
  std::vector<torch::Tensor> params;
  Communicator* comm = nullptr;
  std::vector<std::unique_ptr<Bucket>> buckets;
  std::vector<int64_t> bucket_of;     // param index -> bucket index
  std::vector<int64_t> slot_of;       // param index -> position within its bucket
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators;  // kept alive: hooks live on them
  std::vector<uintptr_t> hook_keys;
  bool synchronize = false;
  Clock::time_point begin_time;
  int64_t next_to_launch = 0;
  std::mutex done_mutex;

  void build_buckets(const ReducerOptions& options);
  void install_hooks();
  void on_grad_ready(int64_t param_index);
  void launch_ready_buckets();
  void launch(Bucket& bucket);
  torch::Tensor squared_norms(const Bucket& bucket) const;
  void gradient_statistics(int world, ReduceStats& stats);
  torch::Tensor bucket_order;  // parameter indices in bucket order, on the gradients' device (once built)
};

// One squared norm per tensor of the bucket, as a vector on its device.
torch::Tensor GradientReducer::Impl::squared_norms(const Bucket& bucket) const {
  std::vector<torch::Tensor> grads;
  grads.reserve(bucket.params.size());
  for (int64_t i : bucket.params) grads.push_back(params[i].grad());
  return kernels::squared_norms(grads);
}

// The squared gradient norms of the averaged gradient (global) and the mean
// of the workers' own (local), per tensor, kept on the gradients' device. On
// the CPU they are copied into the host fields, which costs nothing there; on
// a GPU they stay on the device (the step reads the totals once, with its
// loss), so reducing does not wait for the GPU.
void GradientReducer::Impl::gradient_statistics(int world, ReduceStats& stats) {
  std::vector<torch::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) grads.push_back(p.grad());
  auto global = kernels::squared_norms(grads).to(torch::kDouble);
  torch::Tensor local = global;  // a lone worker: the averaged gradient is its own
  if (world > 1) {
    if (!bucket_order.defined()) {
      std::vector<int64_t> order;
      for (auto& b : buckets) order.insert(order.end(), b->params.begin(), b->params.end());
      bucket_order = torch::tensor(order, torch::kLong).to(global.device());
    }
    std::vector<torch::Tensor> tails;
    for (auto& b : buckets) tails.push_back(b->buffer.narrow(0, b->grad_numel, static_cast<int64_t>(b->params.size())));
    local = torch::zeros_like(global).index_copy_(0, bucket_order, torch::cat(tails).to(torch::kDouble));
  }
  stats.local_grad_sq_device = local;
  stats.global_grad_sq_device = global;
  if (!global.device().is_cpu()) return;
  auto l = local.accessor<double, 1>();
  auto g = global.accessor<double, 1>();
  stats.local_grad_sq_per_tensor.assign(l.data(), l.data() + l.size(0));
  stats.global_grad_sq_per_tensor.assign(g.data(), g.data() + g.size(0));
  for (auto& b : buckets) {  // summed in bucket order, as the norms arrive
    for (int64_t i : b->params) {
      stats.local_grad_sq += l[i];
      stats.global_grad_sq += g[i];
    }
  }
}

namespace {

// Parameters of one dtype and device share a kind (bucket_layout.hpp).
std::vector<ParameterSlot> slots_of(const std::vector<torch::Tensor>& params) {
  std::vector<std::pair<c10::ScalarType, c10::Device>> kinds;
  std::vector<ParameterSlot> slots;
  for (const auto& p : params) {
    const std::pair<c10::ScalarType, c10::Device> kind{p.scalar_type(), p.device()};
    auto it = std::find(kinds.begin(), kinds.end(), kind);
    if (it == kinds.end()) it = kinds.insert(kinds.end(), kind);
    slots.push_back({p.numel() * static_cast<int64_t>(p.element_size()), static_cast<int>(it - kinds.begin())});
  }
  return slots;
}

}  // namespace

void GradientReducer::Impl::build_buckets(const ReducerOptions& options) {
  bucket_of.assign(params.size(), -1);
  slot_of.assign(params.size(), -1);
  const auto groups = distributed::bucket_layout(slots_of(params), options);
  for (auto& group : groups) {
    auto bucket = std::make_unique<Bucket>();
    bucket->params = group;
    for (int64_t i : group) bucket->grad_numel += params[i].numel();
    const auto& first = params[group.front()];
    bucket->buffer = torch::zeros({bucket->grad_numel + static_cast<int64_t>(group.size())},
                                  first.options().requires_grad(false));
    int64_t offset = 0;
    for (size_t k = 0; k < group.size(); ++k) {
      const int64_t i = group[k];
      bucket_of[i] = static_cast<int64_t>(buckets.size());
      slot_of[i] = static_cast<int64_t>(k);
      auto& p = params[i];
      torch::NoGradGuard no_grad;
      // The gradient takes its parameter's layout (channels-last weights get
      // channels-last gradients), so autograd accumulates without a transpose.
      auto flat = bucket->buffer.narrow(0, offset, p.numel());
      auto view = p.is_non_overlapping_and_dense() ? flat.as_strided(p.sizes(), p.strides()) : flat.view(p.sizes());
      if (p.grad().defined()) view.copy_(p.grad());
      p.mutable_grad() = view;
      offset += p.numel();
    }
    buckets.push_back(std::move(bucket));
  }
}

void GradientReducer::Impl::install_hooks() {
  for (size_t i = 0; i < params.size(); ++i) {
    auto accumulator = torch::autograd::impl::grad_accumulator(params[i]);
    if (!accumulator) {
      throw std::invalid_argument(
          fmt::format("gradient reducer: parameter {} is not a leaf that requires grad", i));
    }
    const auto index = static_cast<int64_t>(i);
    hook_keys.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, index](const torch::autograd::variable_list& outputs,
                      const torch::autograd::variable_list& /*inputs*/) {
          on_grad_ready(index);
          return outputs;
        })));
    accumulators.push_back(std::move(accumulator));
  }
}

void GradientReducer::Impl::on_grad_ready(int64_t param_index) {
  if (!synchronize) return;
  Bucket& bucket = *buckets[bucket_of[param_index]];
  // Autograd accumulates into .grad() in place only while it is defined; a
  // caller that reset it made AccumulateGrad allocate a fresh tensor, which
  // the allreduce would never see. Refuse loudly rather than average stale data.
  auto& p = params[param_index];
  if (!p.grad().is_alias_of(bucket.buffer)) {
    throw std::logic_error(fmt::format(
        "gradient reducer: .grad() of parameter {} no longer views its bucket; zero gradients with the reducer, not "
        "by resetting them",
        param_index));
  }
  if (--bucket.pending == 0) launch_ready_buckets();
}

void GradientReducer::Impl::launch_ready_buckets() {
  while (next_to_launch < static_cast<int64_t>(buckets.size()) && buckets[next_to_launch]->pending == 0) {
    launch(*buckets[next_to_launch]);
    ++next_to_launch;
  }
}

void GradientReducer::Impl::launch(Bucket& bucket) {
  torch::NoGradGuard no_grad;
  // Local squared norm of each tensor, written into the bucket's tail so the
  // sum over workers arrives with the allreduce. A lone worker's local norms
  // are its global ones, measured once after backward instead.
  if (comm) {
    bucket.buffer.narrow(0, bucket.grad_numel, static_cast<int64_t>(bucket.params.size()))
        .copy_(squared_norms(bucket));
  }
  bucket.launched = true;
  bucket.launch_time = Clock::now();
  if (!comm) {
    bucket.done_time = bucket.launch_time;
    bucket.done = true;
    return;
  }
  bucket.work = comm->allreduce_async(bucket.buffer);
  Bucket* b = &bucket;
  bucket.work->on_complete([b] {
    b->done_time = Clock::now();
    b->done.store(true, std::memory_order_release);
  });
}

GradientReducer::GradientReducer(std::vector<torch::Tensor> params, Communicator* comm,
                                 ReducerOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->comm = comm && comm->world_size() > 1 ? comm : nullptr;
  for (auto& p : params) {
    if (p.requires_grad()) impl_->params.push_back(p);
  }
  if (impl_->params.empty()) throw std::invalid_argument("gradient reducer: no parameters require grad");
  impl_->build_buckets(options);
  impl_->install_hooks();
}

GradientReducer::~GradientReducer() {
  for (size_t i = 0; i < impl_->accumulators.size(); ++i) {
    impl_->accumulators[i]->del_post_hook(impl_->hook_keys[i]);
  }
}

void GradientReducer::zero_grad() {
  for (auto& b : impl_->buckets) b->buffer.zero_();
}

void GradientReducer::begin_backward(bool synchronize) {
  impl_->synchronize = synchronize;
  impl_->begin_time = Clock::now();
  impl_->next_to_launch = 0;
  for (auto& b : impl_->buckets) {
    b->pending = static_cast<int64_t>(b->params.size());
    b->launched = false;
    b->done = false;
    b->work.reset();
  }
}

ReduceStats GradientReducer::finish_backward() {
  ReduceStats stats;
  auto& im = *impl_;
  if (!im.synchronize) return stats;
  const auto backward_end = Clock::now();
  // Parameters that took no part in this forward never fired their hook.
  for (auto& b : im.buckets) b->pending = 0;
  im.launch_ready_buckets();
  for (auto& b : im.buckets) {
    if (b->work) b->work->wait();
  }
  // The completion callback may run just after wait() returns.
  for (auto& b : im.buckets) {
    while (!b->done.load(std::memory_order_acquire)) std::this_thread::yield();
  }
  const int world = im.comm ? im.comm->world_size() : 1;
  torch::NoGradGuard no_grad;
  for (auto& b : im.buckets) {
    if (world > 1) b->buffer.div_(world);
  }
  im.gradient_statistics(world, stats);
  const auto end = Clock::now();
  stats.exposed_comm_seconds = seconds_between(backward_end, end);
  stats.bucket_ready_seconds.reserve(im.buckets.size());
  for (auto& b : im.buckets) stats.bucket_ready_seconds.push_back(seconds_between(im.begin_time, b->launch_time));
  // Union of the in-flight intervals, and the part of it before backward ended.
  std::vector<std::pair<Clock::time_point, Clock::time_point>> spans;
  for (auto& b : im.buckets) {
    if (b->work) spans.emplace_back(b->launch_time, b->done_time);
  }
  std::sort(spans.begin(), spans.end());
  double busy = 0.0, hidden = 0.0;
  Clock::time_point cursor{};
  for (auto [s, e] : spans) {
    s = std::max(s, cursor);
    if (e <= s) continue;
    busy += seconds_between(s, e);
    if (s < backward_end) hidden += seconds_between(s, std::min(e, backward_end));
    cursor = e;
  }
  stats.comm_busy_seconds = busy;
  stats.hidden_fraction = busy > 0 ? hidden / busy : 0.0;
  return stats;
}

int64_t GradientReducer::num_buckets() const { return static_cast<int64_t>(impl_->buckets.size()); }

std::vector<std::vector<int64_t>> GradientReducer::bucket_layout() const {
  std::vector<std::vector<int64_t>> layout;
  for (auto& b : impl_->buckets) layout.push_back(b->params);
  return layout;
}

void broadcast_from_rank0(Communicator& comm, const std::vector<torch::Tensor>& tensors) {
  if (comm.world_size() <= 1 || tensors.empty()) return;
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> flat;
  for (const auto& t : tensors) flat.push_back(t.detach().reshape({-1}).to(torch::kFloat));
  auto buffer = torch::cat(flat);
  comm.broadcast(buffer, 0);
  int64_t offset = 0;
  for (const auto& t : tensors) {
    auto part = buffer.narrow(0, offset, t.numel()).view(t.sizes());
    t.detach().copy_(part.to(t.scalar_type()));
    offset += t.numel();
  }
}

}  // namespace tula::distributed
