#include "optim/lamb.hpp"

#include <cmath>

#include <torch/torch.h>

#include "kernels/foreach_update.hpp"
#include "kernels/squared_norm.hpp"
#include "optim/adam_direction.hpp"
#include "optim/factor_summary.hpp"

namespace tula::optim {

LAMB::LAMB(std::vector<ParamRef> params, OptimizerOptions options)
    : Optimizer(std::move(params), options.lr), options_(std::move(options)) {
  options_.validate();
  exp_avg_.resize(params_.size());
  exp_avg_sq_.resize(params_.size());
}

void LAMB::step(const StepStats& /*stats*/) {
  torch::NoGradGuard no_grad;
  ++steps_;
  if (use_foreach(options_.update, params_)) {
    foreach_step();
    return;
  }
  trust_device_ = torch::Tensor();
  last_trust_.clear();
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i].param;
    if (!p.grad().defined()) continue;
    auto update = adam_direction(p.grad(), exp_avg_[i], exp_avg_sq_[i], options_.momentum, options_.lamb, steps_);
    double trust = 1.0;
    if (!params_[i].is_bias_or_norm) {
      if (options_.weight_decay != 0) update.add_(p, options_.weight_decay);
      const double w = std::sqrt(kernels::squared_norm(p));
      const double r = std::sqrt(kernels::squared_norm(update));
      trust = w > 0 && r > 0 ? w / r : 1.0;
      last_trust_.push_back(trust);
    }
    p.add_(update, -lr_ * trust);
  }
}

// Adam's moments over all tensors at once, the trust ratios from
// `_foreach_norm` on the device and applied there: no host read.
void LAMB::foreach_step() {
  auto lists = with_gradients(params_);
  if (lists.index.empty()) return;
  // Adapted tensors first, then biases and norms.
  std::vector<size_t> order;
  for (size_t i : lists.index) {
    if (!params_[i].is_bias_or_norm) order.push_back(i);
  }
  const size_t adapted = order.size();
  for (size_t i : lists.index) {
    if (params_[i].is_bias_or_norm) order.push_back(i);
  }
  std::vector<torch::Tensor> w, g, m, v;
  for (size_t i : order) {
    w.push_back(params_[i].param);
    g.push_back(params_[i].param.grad());
    if (!exp_avg_[i].defined()) {
      exp_avg_[i] = torch::zeros_like(g.back());
      exp_avg_sq_[i] = torch::zeros_like(g.back());
    }
    m.push_back(exp_avg_[i]);
    v.push_back(exp_avg_sq_[i]);
  }
  const double beta1 = options_.momentum, beta2 = options_.lamb.beta2, t = static_cast<double>(steps_);
  at::_foreach_mul_(m, beta1);
  at::_foreach_add_(m, g, 1 - beta1);
  at::_foreach_mul_(v, beta2);
  at::_foreach_addcmul_(v, g, g, 1 - beta2);
  // r = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
  auto denominator = at::_foreach_div(v, 1 - std::pow(beta2, t));
  at::_foreach_sqrt_(denominator);
  at::_foreach_add_(denominator, options_.lamb.eps);
  auto update = at::_foreach_div(m, 1 - std::pow(beta1, t));
  at::_foreach_div_(update, denominator);
  if (adapted > 0) {
    std::vector<torch::Tensor> r(update.begin(), update.begin() + static_cast<std::ptrdiff_t>(adapted));
    std::vector<torch::Tensor> wa(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(adapted));
    if (options_.weight_decay != 0) at::_foreach_add_(r, wa, options_.weight_decay);
    auto w_norm = kernels::foreach_squared_norms(wa).sqrt_();
    auto r_norm = kernels::foreach_squared_norms(r).sqrt_();
    trust_device_ = torch::where(w_norm.gt(0).logical_and(r_norm.gt(0)), w_norm / r_norm, torch::ones_like(w_norm));
    kernels::scale_each(r, trust_device_);
  } else {
    trust_device_ = torch::Tensor();
  }
  at::_foreach_add_(w, update, -lr_);
}

// Read here, when the metrics ask, not in the step.
nlohmann::json LAMB::report() const {
  if (trust_device_.defined()) {
    auto t = trust_device_.to(torch::kCPU, torch::kDouble).contiguous();
    last_trust_.assign(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
  }
  return {{"trust_ratio", summarize_factors(last_trust_)}};
}

void LAMB::save(torch::serialize::OutputArchive& archive) const {
  save_state(archive, "exp_avg", exp_avg_);
  save_state(archive, "exp_avg_sq", exp_avg_sq_);
  archive.write("lamb_steps", torch::tensor(steps_, torch::kLong));
}

void LAMB::load(torch::serialize::InputArchive& archive) {
  load_state(archive, "exp_avg", params_, exp_avg_);
  load_state(archive, "exp_avg_sq", params_, exp_avg_sq_);
  torch::Tensor steps;
  if (archive.try_read("lamb_steps", steps)) steps_ = steps.item<int64_t>();
}

}  // namespace tula::optim
