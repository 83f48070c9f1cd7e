// torchvision's MobileNetV3 (Howard et al. 2019), width multiplier 1.0,
// undilated. Every stride-2 conv is padded, so any input size works; the
// classifier sees 1x1 features after the global pool.
#include <algorithm>
#include <string>
#include <vector>

#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

// Rounds channel counts to a multiple of 8 without losing more than 10%, as
// the reference implementation does; it sizes the squeeze-excitation layers.
int64_t make_divisible(double v, int64_t divisor = 8) {
  int64_t rounded = std::max(divisor, static_cast<int64_t>(v + divisor / 2.0) / divisor * divisor);
  if (rounded < 0.9 * v) rounded += divisor;
  return rounded;
}

enum class Act { kNone, kReLU, kHardswish };

// torchvision's Conv2dNormActivation: conv, batch norm, optional activation,
// as a Sequential so parameter names read "<i>.0.weight", "<i>.1.weight".
Seq conv_bn_act(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t groups, Act act) {
  Seq seq(
      nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding((kernel - 1) / 2).groups(groups).bias(false)),
      // PyTorch's momentum 0.01 (LibTorch uses the same convention).
      nn::BatchNorm2d(nn::BatchNorm2dOptions(out).eps(0.001).momentum(0.01)));
  if (act == Act::kReLU) seq->push_back(nn::ReLU(nn::ReLUOptions(true)));
  if (act == Act::kHardswish) seq->push_back(Hardswish());
  return seq;
}

class SqueezeExcitation : public nn::Module {
 public:
  SqueezeExcitation(int64_t channels, int64_t squeeze)
      : nn::Module("SqueezeExcitation"),
        avgpool_(register_module("avgpool", nn::AdaptiveAvgPool2d(1))),
        fc1_(register_module("fc1", nn::Conv2d(nn::Conv2dOptions(channels, squeeze, 1)))),
        fc2_(register_module("fc2", nn::Conv2d(nn::Conv2dOptions(squeeze, channels, 1)))),
        activation_(register_module("activation", nn::ReLU())),
        scale_activation_(register_module("scale_activation", Hardsigmoid())) {}

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor scale = scale_activation_(fc2_(activation_(fc1_(avgpool_(x)))));
    return scale * x;
  }

 private:
  nn::AdaptiveAvgPool2d avgpool_;
  nn::Conv2d fc1_;
  nn::Conv2d fc2_;
  nn::ReLU activation_;
  Hardsigmoid scale_activation_;
};

struct BlockConfig {
  int64_t in;
  int64_t kernel;
  int64_t expanded;
  int64_t out;
  bool se;
  Act act;
  int64_t stride;
};

class InvertedResidual : public nn::Module {
 public:
  explicit InvertedResidual(const BlockConfig& c)
      : nn::Module("InvertedResidual"), use_residual_(c.stride == 1 && c.in == c.out) {
    Seq block;
    if (c.expanded != c.in) block->push_back(conv_bn_act(c.in, c.expanded, 1, 1, 1, c.act));
    block->push_back(conv_bn_act(c.expanded, c.expanded, c.kernel, c.stride, c.expanded, c.act));
    if (c.se) {
      block->push_back(std::make_shared<SqueezeExcitation>(c.expanded, make_divisible(c.expanded / 4)));
    }
    block->push_back(conv_bn_act(c.expanded, c.out, 1, 1, 1, Act::kNone));
    block_ = register_module("block", block);
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor out = block_->forward(x);
    if (use_residual_) out += x;
    return out;
  }

 private:
  bool use_residual_;
  Seq block_{nullptr};
};

constexpr Act RE = Act::kReLU;
constexpr Act HS = Act::kHardswish;

// Table 1 and 2 of the paper: in, kernel, expanded, out, SE, activation, stride.
const std::vector<BlockConfig> kLarge = {
    {16, 3, 16, 16, false, RE, 1},    {16, 3, 64, 24, false, RE, 2},    {24, 3, 72, 24, false, RE, 1},
    {24, 5, 72, 40, true, RE, 2},     {40, 5, 120, 40, true, RE, 1},    {40, 5, 120, 40, true, RE, 1},
    {40, 3, 240, 80, false, HS, 2},   {80, 3, 200, 80, false, HS, 1},   {80, 3, 184, 80, false, HS, 1},
    {80, 3, 184, 80, false, HS, 1},   {80, 3, 480, 112, true, HS, 1},   {112, 3, 672, 112, true, HS, 1},
    {112, 5, 672, 160, true, HS, 2},  {160, 5, 960, 160, true, HS, 1},  {160, 5, 960, 160, true, HS, 1},
};
const std::vector<BlockConfig> kSmall = {
    {16, 3, 16, 16, true, RE, 2},   {16, 3, 72, 24, false, RE, 2},  {24, 3, 88, 24, false, RE, 1},
    {24, 5, 96, 40, true, HS, 2},   {40, 5, 240, 40, true, HS, 1},  {40, 5, 240, 40, true, HS, 1},
    {40, 5, 120, 48, true, HS, 1},  {48, 5, 144, 48, true, HS, 1},  {48, 5, 288, 96, true, HS, 2},
    {96, 5, 576, 96, true, HS, 1},  {96, 5, 576, 96, true, HS, 1},
};

// The last 1x1 conv widens the last block's output six-fold.
int64_t last_conv_channels(const std::vector<BlockConfig>& blocks) { return 6 * blocks.back().out; }

nn::Sequential features(const std::vector<BlockConfig>& blocks, int64_t channels) {
  nn::Sequential features;
  features->push_back(conv_bn_act(channels, blocks.front().in, 3, 2, 1, Act::kHardswish));
  for (const auto& block : blocks) features->push_back(std::make_shared<InvertedResidual>(block));
  features->push_back(conv_bn_act(blocks.back().out, last_conv_channels(blocks), 1, 1, 1, Act::kHardswish));
  return features;
}

}  // namespace

std::shared_ptr<Net> make_mobilenet_v3(bool large, const ModelOptions& options) {
  const auto& blocks = large ? kLarge : kSmall;
  ClassifierHead head;
  head.in_features = last_conv_channels(blocks);
  head.hidden = {large ? 1280 : 1024};
  head.classes = options.classes;
  head.activation = ClassifierHead::Activation::kHardswish;
  head.dropout = nn::DropoutOptions(0.2).inplace(true);
  auto net = std::make_shared<PooledClassifierNet>("MobileNetV3", features(blocks, options.channels), 1,
                                                   make_classifier(head));
  init_conv_fan_out(*net, /*linear_std=*/0.01);
  return net;
}

}  // namespace tula::models
