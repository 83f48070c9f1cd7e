// Pieces shared by the zoo's families, and each family's factory. Internal to
// src/models: only the .cpp files here include it (they get LibTorch from the
// precompiled header, so the includes below cost nothing extra).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/cloneable.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/pooling.h>
#include <torch/nn/options/dropout.h>
#include <torch/nn/pimpl.h>
#include <torch/types.h>

#include "models/zoo.hpp"

namespace tula::models {

// LibTorch 1.13 has the hardswish/hardsigmoid functions but no modules for
// them; modules keep the printed tree (and Sequential indices) like torchvision's.
class HardswishImpl : public torch::nn::Cloneable<HardswishImpl> {
 public:
  void reset() override {}
  torch::Tensor forward(torch::Tensor x);
  void pretty_print(std::ostream& stream) const override;
};
TORCH_MODULE(Hardswish);

class HardsigmoidImpl : public torch::nn::Cloneable<HardsigmoidImpl> {
 public:
  void reset() override {}
  torch::Tensor forward(torch::Tensor x);
  void pretty_print(std::ostream& stream) const override;
};
TORCH_MODULE(Hardsigmoid);

// A Sequential that can itself sit in a Sequential: LibTorch only stores
// modules whose forward() is not a template, which Sequential's is.
class SeqImpl : public torch::nn::SequentialImpl {
 public:
  using SequentialImpl::SequentialImpl;
  torch::Tensor forward(torch::Tensor x) { return SequentialImpl::forward(x); }
};
TORCH_MODULE(Seq);

// torchvision's classifier heads: hidden Linear layers, each with its
// activation and a dropout, then a Linear to the classes, as one Sequential.
// AlexNet puts each dropout before its Linear, VGG and MobileNetV3 after the
// activation; the Sequential's indices, and so the parameter names
// ("classifier.3.weight"), follow from that order.
struct ClassifierHead {
  enum class Activation { kReLU, kHardswish };
  enum class DropoutPlace { kBeforeLinear, kAfterActivation };

  int64_t in_features = 0;
  std::vector<int64_t> hidden;  // width of each hidden Linear layer
  int64_t classes = 0;
  Activation activation = Activation::kReLU;  // ReLU is in place, as torchvision's
  torch::nn::DropoutOptions dropout{0.5};
  DropoutPlace dropout_place = DropoutPlace::kAfterActivation;
};
torch::nn::Sequential make_classifier(const ClassifierHead& head);

// The shape AlexNet, VGG and MobileNetV3 share: features, an adaptive average
// pool to pooled_size x pooled_size, flatten, classifier; the three registered
// as torchvision names them ("features", "avgpool", "classifier").
class PooledClassifierNet : public Net {
 public:
  PooledClassifierNet(std::string name, torch::nn::Sequential features, int64_t pooled_size,
                      torch::nn::Sequential classifier);
  torch::Tensor forward(torch::Tensor x) override;

 private:
  torch::nn::Sequential features_;
  torch::nn::AdaptiveAvgPool2d avgpool_;
  torch::nn::Sequential classifier_;
};

// torchvision's initialization schemes, applied to every module under `root`.
// Convolutions: Kaiming normal, fan-out, ReLU gain; biases zero.
// Batch norms: weight one, bias zero.
// Linear layers: N(0, linear_std) and zero bias when linear_std > 0; left at
// LibTorch's default (the same as PyTorch's) otherwise.
void init_conv_fan_out(torch::nn::Module& root, double linear_std);

// Family factories (one .cpp each); options are already validated by zoo.cpp.
std::shared_ptr<Net> make_resnet(int depth, const ModelOptions& options);
std::shared_ptr<Net> make_cifar_resnet(int depth, const ModelOptions& options);
std::shared_ptr<Net> make_vgg11(bool batch_norm, const ModelOptions& options);
std::shared_ptr<Net> make_alexnet(const ModelOptions& options);
std::shared_ptr<Net> make_mobilenet_v3(bool large, const ModelOptions& options);
std::shared_ptr<Net> make_small_cnn(const ModelOptions& options);
std::shared_ptr<Net> make_lenet5(const ModelOptions& options);

}  // namespace tula::models
