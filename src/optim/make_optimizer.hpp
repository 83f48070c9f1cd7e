// Builds the optimizer `tula train --optimizer` names, with its options.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "optim/ags.hpp"
#include "optim/lamb.hpp"
#include "optim/lars.hpp"
#include "optim/sgd.hpp"

namespace tula::optim {

struct OptimizerSpec {
  std::string name = "sgd";  // sgd, lars, lamb, ags
  double lr = 0.1;
  double momentum = 0.9;
  double weight_decay = 5e-4;
  bool nesterov = false;
  double lars_trust_coefficient = 0.001;
  double lamb_beta1 = 0.9, lamb_beta2 = 0.999, lamb_eps = 1e-6;
  AGSOptions ags;  // its lr, momentum, weight decay and nesterov come from above
};

// The names make_optimizer knows, for messages and --help.
const std::vector<std::string>& optimizer_names();

// Throws std::invalid_argument for an unknown name or bad options.
std::unique_ptr<Optimizer> make_optimizer(std::vector<ParamRef> params, const OptimizerSpec& spec);

}  // namespace tula::optim
