#include "models/layers.hpp"

#include <ostream>
#include <utility>

namespace tula::models {

torch::Tensor HardswishImpl::forward(torch::Tensor x) { return torch::hardswish(x); }

void HardswishImpl::pretty_print(std::ostream& stream) const { stream << "Hardswish()"; }

torch::Tensor HardsigmoidImpl::forward(torch::Tensor x) { return torch::hardsigmoid(x); }

void HardsigmoidImpl::pretty_print(std::ostream& stream) const { stream << "Hardsigmoid()"; }

namespace {

torch::nn::AnyModule head_activation(ClassifierHead::Activation activation) {
  if (activation == ClassifierHead::Activation::kHardswish) return torch::nn::AnyModule(Hardswish());
  return torch::nn::AnyModule(torch::nn::ReLU(torch::nn::ReLUOptions(true)));
}

}  // namespace

torch::nn::Sequential make_classifier(const ClassifierHead& head) {
  using Place = ClassifierHead::DropoutPlace;
  torch::nn::Sequential classifier;
  int64_t in = head.in_features;
  for (const int64_t width : head.hidden) {
    if (head.dropout_place == Place::kBeforeLinear) classifier->push_back(torch::nn::Dropout(head.dropout));
    classifier->push_back(torch::nn::Linear(in, width));
    classifier->push_back(head_activation(head.activation));
    if (head.dropout_place == Place::kAfterActivation) classifier->push_back(torch::nn::Dropout(head.dropout));
    in = width;
  }
  classifier->push_back(torch::nn::Linear(in, head.classes));
  return classifier;
}

PooledClassifierNet::PooledClassifierNet(std::string name, torch::nn::Sequential features, int64_t pooled_size,
                                         torch::nn::Sequential classifier)
    : Net(std::move(name)),
      features_(register_module("features", std::move(features))),
      avgpool_(register_module("avgpool", torch::nn::AdaptiveAvgPool2d(pooled_size))),
      classifier_(register_module("classifier", std::move(classifier))) {}

torch::Tensor PooledClassifierNet::forward(torch::Tensor x) {
  x = torch::flatten(avgpool_(features_->forward(x)), 1);
  return classifier_->forward(x);
}

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
