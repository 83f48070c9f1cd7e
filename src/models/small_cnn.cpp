// A small, fast CNN for tests and Fashion-MNIST: two 3x3 conv + 2x2 max-pool
// stages (32 and 64 channels), dropout, a 128-unit hidden layer, dropout, and
// the classifier; ~0.42M parameters, dominated by the hidden layer.
//
// Pooling after each conv (rather than both convs at full resolution) makes it
// ~4x cheaper at the same accuracy class. The 7x7 adaptive pool is the
// identity on 28x28 inputs and keeps the parameter count (and so the fc sizes)
// the same at any image size; two 2x2 pools need at least 4x4.
#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

class SmallCnn : public Net {
 public:
  explicit SmallCnn(const ModelOptions& options)
      : Net("SmallCnn"),
        conv1_(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(options.channels, 32, 3).padding(1)))),
        conv2_(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)))),
        pool_(register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)))),
        avgpool_(register_module("avgpool", nn::AdaptiveAvgPool2d(7))),
        dropout1_(register_module("dropout1", nn::Dropout(options.dropout >= 0 ? options.dropout : 0.25))),
        fc1_(register_module("fc1", nn::Linear(64 * 7 * 7, 128))),
        dropout2_(register_module("dropout2", nn::Dropout(options.dropout >= 0 ? options.dropout : 0.5))),
        fc2_(register_module("fc2", nn::Linear(128, options.classes))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = pool_(torch::relu(conv1_(x)));
    x = pool_(torch::relu(conv2_(x)));
    x = torch::flatten(dropout1_(avgpool_(x)), 1);
    x = dropout2_(torch::relu(fc1_(x)));
    return fc2_(x);
  }

 private:
  nn::Conv2d conv1_;
  nn::Conv2d conv2_;
  nn::MaxPool2d pool_;
  nn::AdaptiveAvgPool2d avgpool_;
  nn::Dropout dropout1_;
  nn::Linear fc1_;
  nn::Dropout dropout2_;
  nn::Linear fc2_;
};

}  // namespace

std::shared_ptr<Net> make_small_cnn(const ModelOptions& options) {
  return std::make_shared<SmallCnn>(options);
}

}  // namespace tula::models
