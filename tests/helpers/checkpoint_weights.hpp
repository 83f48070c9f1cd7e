// The parameters stored in a Tula checkpoint, loaded into a fresh zoo model.
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

#include "models/zoo.hpp"

namespace tula::testing {

inline std::vector<torch::Tensor> checkpoint_weights(const std::string& dir, const std::string& model_name,
                                                     const models::ModelOptions& options) {
  auto model = models::make_model(model_name, options);
  torch::serialize::InputArchive archive, model_archive;
  archive.load_from(dir + "/latest.pt");
  archive.read("model", model_archive);
  model->load(model_archive);
  return model->parameters();
}

}  // namespace tula::testing
