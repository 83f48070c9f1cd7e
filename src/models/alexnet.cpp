// torchvision's AlexNet: the single-tower variant of Krizhevsky's "one weird
// trick" paper (64-192-384-256-256 channels), not the original two-GPU model.
// torchvision keeps PyTorch's default initialization, and so does this.
#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding));
}

nn::ReLU relu() { return nn::ReLU(nn::ReLUOptions(true)); }

nn::MaxPool2d pool() { return nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2)); }

class AlexNet : public Net {
 public:
  explicit AlexNet(const ModelOptions& options) : Net("AlexNet") {
    features_ = register_module(
        "features", nn::Sequential(conv(options.channels, 64, 11, 4, 2), relu(), pool(),
                                   conv(64, 192, 5, 1, 2), relu(), pool(),
                                   conv(192, 384, 3, 1, 1), relu(),
                                   conv(384, 256, 3, 1, 1), relu(),
                                   conv(256, 256, 3, 1, 1), relu(), pool()));
    avgpool_ = register_module("avgpool", nn::AdaptiveAvgPool2d(6));
    classifier_ = register_module(
        "classifier", nn::Sequential(nn::Dropout(0.5), nn::Linear(256 * 6 * 6, 4096), relu(),
                                     nn::Dropout(0.5), nn::Linear(4096, 4096), relu(),
                                     nn::Linear(4096, options.classes)));
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

std::shared_ptr<Net> make_alexnet(const ModelOptions& options) {
  return std::make_shared<AlexNet>(options);
}

}  // namespace tula::models
