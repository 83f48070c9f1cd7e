#include "optim/lamb.hpp"

#include <cmath>

#include <torch/torch.h>

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

nlohmann::json LAMB::report() const { return {{"trust_ratio", summarize_factors(last_trust_)}}; }

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
