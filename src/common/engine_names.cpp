#include "common/engine_names.hpp"

#include <algorithm>
#include <cctype>

namespace tula::common {

const std::vector<std::string>& zoo_model_names() {
  static const std::vector<std::string> names = {"small_cnn", "lenet5",   "resnet20", "resnet32",
                                                 "resnet56",  "resnet18", "resnet34", "resnet50",
                                                 "vgg11",     "vgg11_bn", "alexnet",  "mobilenet_v3_small",
                                                 "mobilenet_v3_large"};
  return names;
}

bool is_zoo_model(const std::string& name) {
  const auto& names = zoo_model_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool is_script_model_path(const std::string& name) { return name.size() > 3 && name.ends_with(".pt"); }

std::string canonical_dataset_name(const std::string& name) {
  std::string key;
  for (const char c : name) {
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key == "fashionmnist" || key == "fmnist") return "fashion-mnist";
  if (key == "mnist" || key == "cifar10" || key == "cifar100" || key == "synthetic") return key;
  if (key == "imagefolder") return "imagefolder";
  return "";
}

const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names = {"fashion-mnist", "mnist",     "cifar10",
                                                 "cifar100",      "synthetic", "imagefolder"};
  return names;
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace tula::common
