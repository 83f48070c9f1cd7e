#include "models/zoo.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "common/engine_names.hpp"
#include "models/layers.hpp"
#include "models/script_model.hpp"

namespace tula::models {
namespace {

using Factory = std::function<std::shared_ptr<Net>(const ModelOptions&)>;

struct Entry {
  ModelInfo info;
  Factory make;
};

// Minimum sizes are the smallest square inputs for which every layer still has
// a non-empty output (torchvision publishes the same values as weights
// metadata "min_size"). Padded stride-2 convs never empty a map, so ResNets and
// MobileNets accept 1x1 (training then needs batch >= 2 for batch norm).
// AlexNet: 11x11/4 conv then three 3x3/2 unpadded pools need 63. VGG: five 2x2
// pools need 32. small_cnn: two 2x2 pools need 4. lenet5: two 2x2 pools
// around an unpadded 5x5 conv need 12.
const std::vector<Entry>& registry() {
  static const std::vector<Entry> entries = {
      {{"small_cnn", "cnn", "2 conv (32, 64) + 2 fc (128) CNN for tests and Fashion-MNIST", 4},
       make_small_cnn},
      {{"lenet5", "cnn", "LeNet-5 (LeCun et al. 1998) with ReLU and max-pool, ~62k parameters", 12}, make_lenet5},
      {{"resnet20", "resnet", "CIFAR ResNet-20 (He et al. 2016 sec 4.2, option-A shortcuts)", 1},
       [](const ModelOptions& o) { return make_cifar_resnet(20, o); }},
      {{"resnet32", "resnet", "CIFAR ResNet-32 (He et al. 2016 sec 4.2, option-A shortcuts)", 1},
       [](const ModelOptions& o) { return make_cifar_resnet(32, o); }},
      {{"resnet56", "resnet", "CIFAR ResNet-56 (He et al. 2016 sec 4.2, option-A shortcuts)", 1},
       [](const ModelOptions& o) { return make_cifar_resnet(56, o); }},
      {{"resnet18", "resnet", "torchvision ResNet-18", 1},
       [](const ModelOptions& o) { return make_resnet(18, o); }},
      {{"resnet34", "resnet", "torchvision ResNet-34", 1},
       [](const ModelOptions& o) { return make_resnet(34, o); }},
      {{"resnet50", "resnet", "torchvision ResNet-50 (v1.5)", 1},
       [](const ModelOptions& o) { return make_resnet(50, o); }},
      {{"vgg11", "vgg", "torchvision VGG-11", 32},
       [](const ModelOptions& o) { return make_vgg11(false, o); }},
      {{"vgg11_bn", "vgg", "torchvision VGG-11 with batch norm", 32},
       [](const ModelOptions& o) { return make_vgg11(true, o); }},
      {{"alexnet", "alexnet", "torchvision AlexNet", 63}, make_alexnet},
      {{"mobilenet_v3_small", "mobilenet", "torchvision MobileNetV3-Small", 1},
       [](const ModelOptions& o) { return make_mobilenet_v3(false, o); }},
      {{"mobilenet_v3_large", "mobilenet", "torchvision MobileNetV3-Large", 1},
       [](const ModelOptions& o) { return make_mobilenet_v3(true, o); }},
  };
  return entries;
}

std::string known_names() {
  std::string names;
  for (const auto& entry : registry()) {
    if (!names.empty()) names += ", ";
    names += entry.info.name;
  }
  return names;
}

int64_t tensor_bytes(const std::vector<torch::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors) bytes += t.numel() * static_cast<int64_t>(t.element_size());
  return bytes;
}

}  // namespace

const std::vector<ModelInfo>& model_catalog() {
  static const std::vector<ModelInfo> catalog = [] {
    std::vector<ModelInfo> infos;
    for (const auto& entry : registry()) infos.push_back(entry.info);
    return infos;
  }();
  return catalog;
}

std::shared_ptr<Net> make_model(const std::string& name, const ModelOptions& options) {
  if (common::is_script_model_path(name)) return load_script_model(name, options);
  for (const auto& entry : registry()) {
    if (entry.info.name != name) continue;
    if (options.channels < 1 || options.classes < 1) {
      throw std::invalid_argument(
          fmt::format("model '{}': channels and classes must be positive, got channels={} classes={}", name,
                      options.channels, options.classes));
    }
    if (options.image_size < entry.info.min_image_size) {
      throw std::invalid_argument(fmt::format("model '{0}' needs images of at least {1}x{1}, got {2}x{2}", name,
                                              entry.info.min_image_size, options.image_size));
    }
    return entry.make(options);
  }
  throw std::invalid_argument("unknown model '" + name + "'; known models: " + known_names());
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& p : module.parameters()) count += p.numel();
  return count;
}

int64_t weight_bytes(const torch::nn::Module& module) {
  return tensor_bytes(module.parameters()) + tensor_bytes(module.buffers());
}

int64_t input_size(const std::string& name, int64_t requested, int64_t height, int64_t width) {
  if (requested > 0) return requested;
  int64_t size = std::max(height, width);
  for (const auto& info : model_catalog()) {
    if (info.name == name) size = std::max(size, info.min_image_size);
  }
  return size;
}

}  // namespace tula::models
