// The CIFAR ResNets of He et al. 2016, section 4.2: a 3x3 stem of 16 channels,
// three stages of n basic blocks at 16/32/64 channels (feature maps 32/16/8
// on CIFAR), global average pooling and one linear layer; depth = 6n + 2.
//
// Shortcuts are the paper's option A, parameter-free: when a block halves the
// map and doubles the channels, the identity is subsampled by 2 and zero-padded
// in channels. Most reproductions use it (e.g. akamaster/pytorch_resnet_cifar10)
// and it gives the published sizes: resnet20 0.27M, resnet32 0.46M,
// resnet56 0.85M parameters. Submodule names follow akamaster's state_dict
// (conv1, bn1, layer1..3, linear), as does the init: Kaiming normal (fan-in)
// on conv and linear weights.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 3).stride(stride).padding(1).bias(false));
}

class CifarBasicBlock : public nn::Module {
 public:
  CifarBasicBlock(int64_t in, int64_t planes, int64_t stride)
      : nn::Module("BasicBlock"),
        conv1_(register_module("conv1", conv3x3(in, planes, stride))),
        bn1_(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(planes))),
        stride_(stride),
        pad_channels_(planes - in) {
    if (pad_channels_ < 0 || pad_channels_ % 2 != 0) {
      throw std::invalid_argument(
          fmt::format("cifar resnet: option-A shortcut cannot map {} to {} channels", in, planes));
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = torch::relu(bn1_(conv1_(x)));
    out = bn2_(conv2_(out));
    out += shortcut(x);
    return torch::relu(out);
  }

 private:
  torch::Tensor shortcut(const torch::Tensor& x) const {
    if (stride_ == 1 && pad_channels_ == 0) return x;
    using torch::indexing::Slice;
    // Taking every stride-th pixel from 0 matches a stride-s 3x3 conv with
    // padding 1: both give ceil(size / s) outputs, for odd sizes too.
    torch::Tensor sub = x.index({Slice(), Slice(), Slice(0, torch::indexing::None, stride_),
                                 Slice(0, torch::indexing::None, stride_)});
    const int64_t half = pad_channels_ / 2;
    return torch::constant_pad_nd(sub, {0, 0, 0, 0, half, half}, 0);
  }

  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  int64_t stride_;
  int64_t pad_channels_;
};

class CifarResNet : public Net {
 public:
  CifarResNet(int blocks_per_stage, const ModelOptions& options) : Net("CifarResNet") {
    conv1_ = register_module("conv1", conv3x3(options.channels, 16, 1));
    bn1_ = register_module("bn1", nn::BatchNorm2d(16));
    const int64_t planes[3] = {16, 32, 64};
    int64_t in = 16;
    for (int stage = 0; stage < 3; ++stage) {
      nn::Sequential layer;
      for (int b = 0; b < blocks_per_stage; ++b) {
        const int64_t stride = (stage > 0 && b == 0) ? 2 : 1;
        layer->push_back(std::make_shared<CifarBasicBlock>(in, planes[stage], stride));
        in = planes[stage];
      }
      layers_[stage] = register_module("layer" + std::to_string(stage + 1), layer);
    }
    linear_ = register_module("linear", nn::Linear(64, options.classes));

    torch::NoGradGuard no_grad;
    for (const auto& module : modules(/*include_self=*/false)) {
      if (auto* conv = module->as<nn::Conv2d>()) {
        nn::init::kaiming_normal_(conv->weight);
      } else if (auto* linear = module->as<nn::Linear>()) {
        nn::init::kaiming_normal_(linear->weight);
      }
    }
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::relu(bn1_(conv1_(x)));
    for (auto& layer : layers_) x = layer->forward(x);
    // Global average pooling; on the square maps of CIFAR it equals the
    // paper's 8x8 average pool.
    x = torch::flatten(torch::adaptive_avg_pool2d(x, {1, 1}), 1);
    return linear_(x);
  }

 private:
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  nn::Sequential layers_[3] = {nullptr, nullptr, nullptr};
  nn::Linear linear_{nullptr};
};

}  // namespace

std::shared_ptr<Net> make_cifar_resnet(int depth, const ModelOptions& options) {
  if (depth < 8 || (depth - 2) % 6 != 0) {
    throw std::invalid_argument(fmt::format("cifar resnet: depth must be 6n+2, got {}", depth));
  }
  return std::make_shared<CifarResNet>((depth - 2) / 6, options);
}

}  // namespace tula::models
