#include "optim/sgd.hpp"

#include "kernels/foreach_update.hpp"
#include "kernels/momentum_update.hpp"

#include <torch/torch.h>

namespace tula::optim {

SGD::SGD(std::vector<ParamRef> params, OptimizerOptions options)
    : Optimizer(std::move(params), options.lr), options_(std::move(options)) {
  options_.validate();
  momentum_.resize(params_.size());
}

void SGD::step(const StepStats& /*stats*/) {
  if (use_foreach(options_.update, params_)) {
    foreach_step();
    return;
  }
  kernels::MomentumUpdate update;
  update.lr = lr_;
  update.momentum = options_.momentum;
  update.weight_decay = options_.weight_decay;
  update.nesterov = options_.nesterov;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i].param;
    if (!p.grad().defined()) continue;
    kernels::momentum_update(p, p.grad(), momentum_[i], update);
  }
}

void SGD::foreach_step() {
  auto lists = with_gradients(params_);
  std::vector<torch::Tensor> bufs;
  for (size_t i : lists.index) bufs.push_back(momentum_[i]);
  kernels::ForeachMomentum u;
  u.lr = lr_;
  u.momentum = options_.momentum;
  u.nesterov = options_.nesterov;
  kernels::foreach_sgd_update(lists.params, lists.grads, bufs, options_.weight_decay, u);
  for (size_t k = 0; k < lists.index.size(); ++k) momentum_[lists.index[k]] = bufs[k];
}

void SGD::save(torch::serialize::OutputArchive& archive) const { save_state(archive, "momentum", momentum_); }

void SGD::load(torch::serialize::InputArchive& archive) { load_state(archive, "momentum", params_, momentum_); }

}  // namespace tula::optim
