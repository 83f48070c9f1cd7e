#include "optim/make_optimizer.hpp"

#include <stdexcept>

namespace tula::optim {

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = {"sgd", "lars", "lamb", "ags"};
  return names;
}

std::unique_ptr<Optimizer> make_optimizer(std::vector<ParamRef> params, const OptimizerSpec& spec) {
  if (spec.name == "sgd") {
    SGDOptions o;
    o.lr = spec.lr;
    o.momentum = spec.momentum;
    o.weight_decay = spec.weight_decay;
    o.nesterov = spec.nesterov;
    return std::make_unique<SGD>(std::move(params), o);
  }
  if (spec.name == "lars") {
    LARSOptions o;
    o.lr = spec.lr;
    o.momentum = spec.momentum;
    o.weight_decay = spec.weight_decay;
    o.trust_coefficient = spec.lars_trust_coefficient;
    return std::make_unique<LARS>(std::move(params), o);
  }
  if (spec.name == "lamb") {
    LAMBOptions o;
    o.lr = spec.lr;
    o.beta1 = spec.lamb_beta1;
    o.beta2 = spec.lamb_beta2;
    o.eps = spec.lamb_eps;
    o.weight_decay = spec.weight_decay;
    return std::make_unique<LAMB>(std::move(params), o);
  }
  if (spec.name == "ags") {
    AGSOptions o = spec.ags;
    o.lr = spec.lr;
    o.momentum = spec.momentum;
    o.weight_decay = spec.weight_decay;
    o.nesterov = spec.nesterov;
    return std::make_unique<AGS>(std::move(params), o);
  }
  std::string known;
  for (const auto& n : optimizer_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown optimizer '" + spec.name + "' (" + known + ")");
}

}  // namespace tula::optim
