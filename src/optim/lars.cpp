#include "optim/lars.hpp"

#include <cmath>

#include <torch/torch.h>

#include "kernels/foreach_update.hpp"
#include "kernels/momentum_update.hpp"
#include "kernels/squared_norm.hpp"
#include "optim/factor_summary.hpp"

namespace tula::optim {

LARS::LARS(std::vector<ParamRef> params, OptimizerOptions options)
    : Optimizer(std::move(params), options.lr), options_(std::move(options)) {
  options_.validate();
  momentum_.resize(params_.size());
}

void LARS::step(const StepStats& stats) {
  if (use_foreach(options_.update, params_)) {
    foreach_step();
    return;
  }
  trust_device_ = torch::Tensor();
  last_trust_.clear();
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i].param;
    if (!p.grad().defined()) continue;
    kernels::MomentumUpdate u;
    u.lr = lr_;
    u.momentum = options_.momentum;
    u.nesterov = options_.nesterov;
    if (!params_[i].is_bias_or_norm) {
      // The engine measured |g|^2 of the averaged gradient while reducing it.
      const double g2 = i < stats.global_grad_sq_per_tensor.size() ? stats.global_grad_sq_per_tensor[i]
                                                                    : kernels::squared_norm(p.grad());
      const double w = std::sqrt(kernels::squared_norm(p));
      const double g = std::sqrt(g2);
      const double trust =
          w > 0 && g > 0 ? options_.lars.trust_coefficient * w / (g + options_.weight_decay * w + options_.lars.eps) : 1.0;
      u.grad_scale = trust;
      u.weight_decay = trust * options_.weight_decay;
      last_trust_.push_back(trust);
    }
    kernels::momentum_update(p, p.grad(), momentum_[i], u);
  }
}

// The norms come from `_foreach_norm` on the device, the trust ratios are
// computed there and applied as per-tensor factors: no host read. (The
// engine's host copies of the gradient norms are not used here, so a step on
// a GPU does not wait for them.)
void LARS::foreach_step() {
  torch::NoGradGuard no_grad;
  auto lists = with_gradients(params_);
  if (lists.index.empty()) return;
  std::vector<torch::Tensor> adapted_w, adapted_g, plain_g, ordered_w, bufs;
  std::vector<size_t> order;  // adapted tensors first, then the plain ones
  for (size_t k = 0; k < lists.index.size(); ++k) {
    if (params_[lists.index[k]].is_bias_or_norm) continue;
    adapted_w.push_back(lists.params[k]);
    adapted_g.push_back(lists.grads[k]);
    order.push_back(lists.index[k]);
  }
  for (size_t k = 0; k < lists.index.size(); ++k) {
    if (!params_[lists.index[k]].is_bias_or_norm) continue;
    plain_g.push_back(lists.grads[k]);
    order.push_back(lists.index[k]);
  }
  for (size_t i : order) {
    ordered_w.push_back(params_[i].param);
    bufs.push_back(momentum_[i]);
  }
  // d = trust * (g + wd w) for the adapted tensors, g for the others.
  auto directions = kernels::decayed_gradients(adapted_g, adapted_w, options_.weight_decay);
  if (!adapted_w.empty()) {
    auto w = kernels::foreach_squared_norms(adapted_w).sqrt_();
    auto g = kernels::foreach_squared_norms(adapted_g).sqrt_();
    auto trust = options_.lars.trust_coefficient * w / (g + options_.weight_decay * w + options_.lars.eps);
    trust_device_ = torch::where((w > 0).logical_and(g > 0), trust, torch::ones_like(trust));
    kernels::scale_each(directions, trust_device_);
  } else {
    trust_device_ = torch::Tensor();
  }
  // Nesterov adds to the directions in place: the plain tensors' gradients are copied first.
  if (options_.nesterov) plain_g = kernels::decayed_gradients(plain_g, plain_g, 0.0);
  directions.insert(directions.end(), plain_g.begin(), plain_g.end());
  kernels::ForeachMomentum u;
  u.lr = lr_;
  u.momentum = options_.momentum;
  u.nesterov = options_.nesterov;
  kernels::foreach_momentum_update(ordered_w, directions, bufs, u);
  for (size_t k = 0; k < order.size(); ++k) momentum_[order[k]] = bufs[k];
}

// Read here, when the metrics ask, not in the step.
nlohmann::json LARS::report() const {
  if (trust_device_.defined()) {
    auto t = trust_device_.to(torch::kCPU, torch::kDouble).contiguous();
    last_trust_.assign(t.data_ptr<double>(), t.data_ptr<double>() + t.numel());
  }
  return {{"trust_ratio", summarize_factors(last_trust_)}};
}

void LARS::save(torch::serialize::OutputArchive& archive) const { save_state(archive, "momentum", momentum_); }

void LARS::load(torch::serialize::InputArchive& archive) { load_state(archive, "momentum", params_, momentum_); }

}  // namespace tula::optim
