#include "optim/lars.hpp"

#include <cmath>

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

nlohmann::json LARS::report() const { return {{"trust_ratio", summarize_factors(last_trust_)}}; }

void LARS::save(torch::serialize::OutputArchive& archive) const { save_state(archive, "momentum", momentum_); }

void LARS::load(torch::serialize::InputArchive& archive) { load_state(archive, "momentum", params_, momentum_); }

}  // namespace tula::optim
