#include "models/layers.hpp"

#include <ostream>

namespace tula::models {

torch::Tensor HardswishImpl::forward(torch::Tensor x) { return torch::hardswish(x); }

void HardswishImpl::pretty_print(std::ostream& stream) const { stream << "Hardswish()"; }

torch::Tensor HardsigmoidImpl::forward(torch::Tensor x) { return torch::hardsigmoid(x); }

void HardsigmoidImpl::pretty_print(std::ostream& stream) const { stream << "Hardsigmoid()"; }

void init_conv_fan_out(torch::nn::Module& root, double linear_std) {
  torch::NoGradGuard no_grad;
  for (const auto& module : root.modules(/*include_self=*/false)) {
    if (auto* conv = module->as<torch::nn::Conv2d>()) {
      // kFanOut keeps the backward signal's variance, as torchvision chose.
      torch::nn::init::kaiming_normal_(conv->weight, 0.0, torch::kFanOut, torch::kReLU);
      if (conv->bias.defined()) conv->bias.zero_();
    } else if (auto* bn = module->as<torch::nn::BatchNorm2d>()) {
      bn->weight.fill_(1.0);
      bn->bias.zero_();
    } else if (auto* linear = module->as<torch::nn::Linear>()) {
      if (linear_std > 0) {
        linear->weight.normal_(0.0, linear_std);
        if (linear->bias.defined()) linear->bias.zero_();
      }
    }
  }
}

}  // namespace tula::models
