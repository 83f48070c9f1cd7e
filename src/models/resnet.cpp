// torchvision's ResNet (v1.5: the stride of a bottleneck sits on its 3x3 conv).
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

nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, 1).stride(stride).bias(false));
}

// The projection shortcut torchvision uses whenever shape changes (option B).
nn::Sequential downsample_for(int64_t in, int64_t out, int64_t stride) {
  if (stride == 1 && in == out) return nullptr;
  return nn::Sequential(conv1x1(in, out, stride), nn::BatchNorm2d(out));
}

class BasicBlock : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 1;

  BasicBlock(int64_t in, int64_t planes, int64_t stride)
      : nn::Module("BasicBlock"),
        conv1_(register_module("conv1", conv3x3(in, planes, stride))),
        bn1_(register_module("bn1", nn::BatchNorm2d(planes))),
        relu_(register_module("relu", nn::ReLU(nn::ReLUOptions(true)))),
        conv2_(register_module("conv2", conv3x3(planes, planes, 1))),
        bn2_(register_module("bn2", nn::BatchNorm2d(planes))) {
    if (auto down = downsample_for(in, planes * kExpansion, stride)) {
      downsample_ = register_module("downsample", down);
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor identity = downsample_ ? downsample_->forward(x) : x;
    torch::Tensor out = relu_(bn1_(conv1_(x)));
    out = bn2_(conv2_(out));
    out += identity;
    return relu_(out);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::ReLU relu_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Sequential downsample_{nullptr};
};

class Bottleneck : public nn::Module {
 public:
  static constexpr int64_t kExpansion = 4;

  Bottleneck(int64_t in, int64_t planes, int64_t stride)
      : nn::Module("Bottleneck"),
        conv1_(register_module("conv1", conv1x1(in, planes, 1))),
        bn1_(register_module("bn1", nn::BatchNorm2d(planes))),
        conv2_(register_module("conv2", conv3x3(planes, planes, stride))),
        bn2_(register_module("bn2", nn::BatchNorm2d(planes))),
        conv3_(register_module("conv3", conv1x1(planes, planes * kExpansion, 1))),
        bn3_(register_module("bn3", nn::BatchNorm2d(planes * kExpansion))),
        relu_(register_module("relu", nn::ReLU(nn::ReLUOptions(true)))) {
    if (auto down = downsample_for(in, planes * kExpansion, stride)) {
      downsample_ = register_module("downsample", down);
    }
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor identity = downsample_ ? downsample_->forward(x) : x;
    torch::Tensor out = relu_(bn1_(conv1_(x)));
    out = relu_(bn2_(conv2_(out)));
    out = bn3_(conv3_(out));
    out += identity;
    return relu_(out);
  }

 private:
  nn::Conv2d conv1_;
  nn::BatchNorm2d bn1_;
  nn::Conv2d conv2_;
  nn::BatchNorm2d bn2_;
  nn::Conv2d conv3_;
  nn::BatchNorm2d bn3_;
  nn::ReLU relu_;
  nn::Sequential downsample_{nullptr};
};

template <typename Block>
class ResNet : public Net {
 public:
  ResNet(const int (&blocks)[4], const ModelOptions& options) : Net("ResNet") {
    conv1_ = register_module(
        "conv1", nn::Conv2d(nn::Conv2dOptions(options.channels, 64, 7).stride(2).padding(3).bias(false)));
    bn1_ = register_module("bn1", nn::BatchNorm2d(64));
    relu_ = register_module("relu", nn::ReLU(nn::ReLUOptions(true)));
    maxpool_ = register_module("maxpool", nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).padding(1)));
    const int64_t planes[4] = {64, 128, 256, 512};
    for (int i = 0; i < 4; ++i) {
      layers_[i] = register_module("layer" + std::to_string(i + 1),
                                   make_layer(planes[i], blocks[i], i == 0 ? 1 : 2));
    }
    avgpool_ = register_module("avgpool", nn::AdaptiveAvgPool2d(1));
    fc_ = register_module("fc", nn::Linear(512 * Block::kExpansion, options.classes));
    // torchvision leaves fc at PyTorch's default init (zero_init_residual=False).
    init_conv_fan_out(*this, /*linear_std=*/0.0);
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = maxpool_(relu_(bn1_(conv1_(x))));
    for (auto& layer : layers_) x = layer->forward(x);
    x = torch::flatten(avgpool_(x), 1);
    return fc_(x);
  }

 private:
  nn::Sequential make_layer(int64_t planes, int blocks, int64_t stride) {
    nn::Sequential layer;
    layer->push_back(std::make_shared<Block>(inplanes_, planes, stride));
    inplanes_ = planes * Block::kExpansion;
    for (int i = 1; i < blocks; ++i) layer->push_back(std::make_shared<Block>(inplanes_, planes, 1));
    return layer;
  }

  int64_t inplanes_ = 64;
  nn::Conv2d conv1_{nullptr};
  nn::BatchNorm2d bn1_{nullptr};
  nn::ReLU relu_{nullptr};
  nn::MaxPool2d maxpool_{nullptr};
  nn::Sequential layers_[4] = {nullptr, nullptr, nullptr, nullptr};
  nn::AdaptiveAvgPool2d avgpool_{nullptr};
  nn::Linear fc_{nullptr};
};

}  // namespace

std::shared_ptr<Net> make_resnet(int depth, const ModelOptions& options) {
  static const int kBlocks18[4] = {2, 2, 2, 2};
  static const int kBlocks34[4] = {3, 4, 6, 3};
  switch (depth) {
    case 18: return std::make_shared<ResNet<BasicBlock>>(kBlocks18, options);
    case 34: return std::make_shared<ResNet<BasicBlock>>(kBlocks34, options);
    case 50: return std::make_shared<ResNet<Bottleneck>>(kBlocks34, options);
    default: throw std::invalid_argument(fmt::format("resnet: no ImageNet ResNet of depth {}", depth));
  }
}

}  // namespace tula::models
