// torchvision's VGG-11 (configuration "A" of Simonyan & Zisserman), with and
// without batch norm. The 7x7 adaptive pool makes the classifier independent
// of the input size; the five 2x2 max pools need at least 32x32.
#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

constexpr int64_t kPool = 0;  // marks a max pool in the configuration
constexpr int64_t kConfigA[] = {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};

class Vgg : public Net {
 public:
  Vgg(bool batch_norm, const ModelOptions& options) : Net("VGG") {
    nn::Sequential features;
    int64_t in = options.channels;
    for (int64_t v : kConfigA) {
      if (v == kPool) {
        features->push_back(nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
        continue;
      }
      features->push_back(nn::Conv2d(nn::Conv2dOptions(in, v, 3).padding(1)));
      if (batch_norm) features->push_back(nn::BatchNorm2d(v));
      features->push_back(nn::ReLU(nn::ReLUOptions(true)));
      in = v;
    }
    features_ = register_module("features", features);
    avgpool_ = register_module("avgpool", nn::AdaptiveAvgPool2d(7));
    classifier_ = register_module(
        "classifier", nn::Sequential(nn::Linear(512 * 7 * 7, 4096), nn::ReLU(nn::ReLUOptions(true)),
                                     nn::Dropout(0.5), nn::Linear(4096, 4096),
                                     nn::ReLU(nn::ReLUOptions(true)), nn::Dropout(0.5),
                                     nn::Linear(4096, options.classes)));
    init_conv_fan_out(*this, /*linear_std=*/0.01);
  }

  torch::Tensor forward(torch::Tensor x) override {
    x = torch::flatten(avgpool_(features_->forward(x)), 1);
    return classifier_->forward(x);
  }

 private:
  nn::Sequential features_{nullptr};
  nn::AdaptiveAvgPool2d avgpool_{nullptr};
  nn::Sequential classifier_{nullptr};
};

}  // namespace

std::shared_ptr<Net> make_vgg11(bool batch_norm, const ModelOptions& options) {
  return std::make_shared<Vgg>(batch_norm, options);
}

}  // namespace tula::models
