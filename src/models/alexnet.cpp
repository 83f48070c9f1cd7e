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

nn::Sequential features(int64_t channels) {
  return nn::Sequential(conv(channels, 64, 11, 4, 2), relu(), pool(),
                        conv(64, 192, 5, 1, 2), relu(), pool(),
                        conv(192, 384, 3, 1, 1), relu(),
                        conv(384, 256, 3, 1, 1), relu(),
                        conv(256, 256, 3, 1, 1), relu(), pool());
}

}  // namespace

std::shared_ptr<Net> make_alexnet(const ModelOptions& options) {
  ClassifierHead head;
  head.in_features = 256 * 6 * 6;
  head.hidden = {4096, 4096};
  head.classes = options.classes;
  head.dropout_place = ClassifierHead::DropoutPlace::kBeforeLinear;
  return std::make_shared<PooledClassifierNet>("AlexNet", features(options.channels), 6, make_classifier(head));
}

}  // namespace tula::models
