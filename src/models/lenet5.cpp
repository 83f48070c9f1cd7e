// LeNet-5 (LeCun et al. 1998) in its common modern form: ReLU and 2x2 max-pool
// where the original had scaled tanh and trainable subsampling, and a plain
// linear classifier for the RBF output layer. conv 5x5 (6, padded so 28x28
// behaves as the paper's 32x32) -> pool -> conv 5x5 (16) -> pool -> fc 120 ->
// fc 84 -> classes: 61,706 parameters on 1x28x28 with 10 classes, about a
// ninth of small_cnn, for runs that need many trainings (large-batch grids).
//
// The 5x5 adaptive pool is the identity on 28x28 inputs and keeps the fc
// sizes at any other size; the pools and the unpadded conv need 12x12.
#include "models/layers.hpp"

namespace tula::models {
namespace {

namespace nn = torch::nn;

class LeNet5 : public Net {
 public:
  explicit LeNet5(const ModelOptions& options)
      : Net("LeNet5"),
        conv1_(register_module("conv1", nn::Conv2d(nn::Conv2dOptions(options.channels, 6, 5).padding(2)))),
        conv2_(register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)))),
        pool_(register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)))),
        avgpool_(register_module("avgpool", nn::AdaptiveAvgPool2d(5))),
        fc1_(register_module("fc1", nn::Linear(16 * 5 * 5, 120))),
        fc2_(register_module("fc2", nn::Linear(120, 84))),
        fc3_(register_module("fc3", nn::Linear(84, options.classes))) {}

  torch::Tensor forward(torch::Tensor x) override {
    x = pool_(torch::relu(conv1_(x)));
    x = pool_(torch::relu(conv2_(x)));
    x = torch::flatten(avgpool_(x), 1);
    x = torch::relu(fc1_(x));
    x = torch::relu(fc2_(x));
    return fc3_(x);
  }

 private:
  nn::Conv2d conv1_;
  nn::Conv2d conv2_;
  nn::MaxPool2d pool_;
  nn::AdaptiveAvgPool2d avgpool_;
  nn::Linear fc1_;
  nn::Linear fc2_;
  nn::Linear fc3_;
};

}  // namespace

std::shared_ptr<Net> make_lenet5(const ModelOptions& options) { return std::make_shared<LeNet5>(options); }

}  // namespace tula::models
