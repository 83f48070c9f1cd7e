// torchvision's VGG-11 (configuration "A" of Simonyan & Zisserman), with and
// without batch norm. The 7x7 adaptive pool makes the classifier independent
// of the input size; the five 2x2 max pools need at least 32x32.
#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

constexpr int64_t kPool = 0;  // marks a max pool in the configuration
constexpr int64_t kConfigA[] = {64, kPool, 128, kPool, 256, 256, kPool, 512, 512, kPool, 512, 512, kPool};

nn::Sequential features(bool batch_norm, int64_t channels) {
  nn::Sequential features;
  int64_t in = channels;
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
  return features;
}

}  // namespace

std::shared_ptr<Net> make_vgg11(bool batch_norm, const ModelOptions& options) {
  ClassifierHead head;
  head.in_features = 512 * 7 * 7;
  head.hidden = {4096, 4096};
  head.classes = options.classes;
  auto net = std::make_shared<PooledClassifierNet>("VGG", features(batch_norm, options.channels), 7,
                                                   make_classifier(head));
  init_conv_fan_out(*net, /*linear_std=*/0.01);
  return net;
}

}  // namespace tula::models
