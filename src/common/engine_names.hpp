// The names the training engine answers to, without the engine: the zoo's
// models and the data sets it reads. The LibTorch-free parts (the service's
// job checks, tune) check names with these; src/models and src/data build
// the real things, and a test holds the zoo's catalog to this list.
// No LibTorch here.
#pragma once
#include <string>
#include <vector>

namespace tula::common {

// Every model of the zoo (src/models/zoo.cpp), in the order `tula models` lists them.
const std::vector<std::string>& zoo_model_names();
bool is_zoo_model(const std::string& name);
// A model given as a file: a TorchScript module saved from Python (name ends in ".pt").
bool is_script_model_path(const std::string& name);

// The canonical name of a data set from the spellings people type
// ("Fashion-MNIST", "fashion_mnist", "fmnist", "CIFAR-10", "image_folder"), or "" if unknown.
std::string canonical_dataset_name(const std::string& name);
// The canonical names, for messages: "fashion-mnist, mnist, cifar10, cifar100, synthetic, imagefolder".
const std::vector<std::string>& dataset_names();

// "a, b, c": names joined for a message.
std::string join_names(const std::vector<std::string>& names);

}  // namespace tula::common
