// The CNN zoo. Architectures are identical to torchvision's (same layers, same
// parameter counts for the same input channels and class count); the CIFAR
// ResNets follow He et al. 2016, section 4.2.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

namespace tula::models {

struct ModelOptions {
  int64_t channels = 3;
  int64_t classes = 1000;
  int64_t image_size = 224;  // used to check the model accepts the input
  // Dropout probability of small_cnn's layers; negative keeps the model's own
  // (0.25 and 0.5). 0 makes the forward deterministic (tests of DDP equivalence).
  double dropout = -1.0;
};

// Every zoo model: a module with a single-tensor forward returning logits.
class Net : public torch::nn::Module {
 public:
  virtual torch::Tensor forward(torch::Tensor x) = 0;

 protected:
  // The name printed for the module (e.g. "ResNet"), instead of the C++ type.
  explicit Net(std::string name) : torch::nn::Module(std::move(name)) {}
};

struct ModelInfo {
  std::string name;
  std::string family;        // "resnet", "vgg", "alexnet", "mobilenet", "cnn"
  std::string description;
  int64_t min_image_size;    // smallest square input the model accepts
};

// Names of every model, in a stable order.
const std::vector<ModelInfo>& model_catalog();

// The square input size `tula train` feeds a model: `requested` if positive,
// else the data's larger side raised to the model's minimum (an unknown name
// keeps the data's size; make_model reports it).
int64_t input_size(const std::string& name, int64_t requested, int64_t height, int64_t width);

// Builds a model with torchvision's initialization, or loads a TorchScript
// file when `name` is a path ending in .pt (models/script_model.hpp). Throws
// std::invalid_argument naming the model if unknown, or if options.image_size
// is below its minimum.
std::shared_ptr<Net> make_model(const std::string& name, const ModelOptions& options);

int64_t parameter_count(const torch::nn::Module& module);
// Bytes of parameters plus buffers (e.g. batch-norm running statistics).
int64_t weight_bytes(const torch::nn::Module& module);

}  // namespace tula::models
