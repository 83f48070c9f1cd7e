#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "data/formats.hpp"

namespace tula::data {
namespace {

// Accepts the spellings people type ("Fashion-MNIST", "fashion_mnist",
// "CIFAR-10") and returns the canonical name, or "" if unknown.
std::string canonical_name(const std::string& name) {
  std::string key;
  for (const char c : name) {
    if (c != '-' && c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (key == "fashionmnist" || key == "fmnist") return "fashion-mnist";
  if (key == "mnist") return "mnist";
  if (key == "cifar10") return "cifar10";
  if (key == "cifar100") return "cifar100";
  if (key == "synthetic") return "synthetic";
  return "";
}

std::string known_names() { return "fashion-mnist, mnist, cifar10, cifar100, synthetic"; }

}  // namespace

std::string default_data_dir(const std::string& name) {
  const std::string canonical = canonical_name(name);
  if (canonical.empty()) {
    throw std::invalid_argument("unknown data set '" + name + "' (known: " + known_names() + ")");
  }
  if (canonical == "synthetic") return "";
  return "/usr/share/datasets/" + canonical;
}

std::shared_ptr<Dataset> open_dataset(const DatasetOptions& options, Split split) {
  const std::string canonical = canonical_name(options.name);
  if (canonical.empty()) {
    throw std::invalid_argument("unknown data set '" + options.name + "' (known: " + known_names() +
                                ")");
  }
  if (canonical == "synthetic") return open_synthetic(options, split);
  const std::string dir = options.data_dir.empty() ? default_data_dir(canonical) : options.data_dir;
  if (canonical == "cifar10") return open_cifar10(dir, split);
  if (canonical == "cifar100") return open_cifar100(dir, split);
  return open_idx(canonical, dir, split);
}

}  // namespace tula::data
