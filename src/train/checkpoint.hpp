// Checkpoints: model parameters and buffers, optimizer state, and where
// training stands (epoch, step, the run's options that fix the sample order),
// in one file written atomically (temporary file, then rename), so a crash
// while writing never leaves a truncated checkpoint behind.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>
#include <torch/nn/module.h>

#include "optim/optimizer.hpp"
#include "train/weight_average.hpp"

namespace tula::train {

struct CheckpointState {
  int64_t epoch = 0;          // the epoch in progress (or next, when step_in_epoch == 0)
  int64_t step_in_epoch = 0;  // optimizer steps already done in that epoch
  int64_t global_step = 0;
  int64_t global_batch = 0;
  int world_size = 1;
  uint64_t seed = 0;
  std::string model;
  std::string dataset;
  // What the model was built for: channels, height, width, classes,
  // image_size, and for synthetic data its size (tools rebuild the model and
  // data from it). Null in checkpoints that predate it.
  nlohmann::json input;
  nlohmann::json to_json() const;
  static CheckpointState from_json(const nlohmann::json& j);
};

// <dir>/latest.pt, and <dir>/latest.json with the state for people and tools.
std::string checkpoint_path(const std::string& dir);

// average: the averaged weights an evaluation scores, where the run keeps them.
// keep_copy: also keep this one as <dir>/step-<global_step>.pt (a hard link to
// the file just written; later checkpoints replace latest.pt, not it), for
// analysis at chosen points of a run (`tula analyze`).
void save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                     const optim::Optimizer& optimizer, const CheckpointState& state, bool keep_copy = false,
                     const WeightAverage* average = nullptr);

// Loads only the model's parameters and buffers and the state from one
// checkpoint file (latest.pt or a kept step-N.pt); throws naming the file.
CheckpointState load_model_from_checkpoint(const std::string& path, torch::nn::Module& model);

// The training state stored in a checkpoint file, without loading tensors.
CheckpointState read_checkpoint_state(const std::string& path);

// Loads into model and optimizer, every tensor onto `device` (the model's),
// and into `average` where given: the checkpoint's average, or the loaded
// weights where it kept none; nullopt when the directory holds no
// checkpoint. Throws std::runtime_error naming the file if it is corrupt or
// belongs to another model.
std::optional<CheckpointState> load_checkpoint(const std::string& dir, torch::nn::Module& model,
                                               optim::Optimizer& optimizer, const torch::Device& device,
                                               WeightAverage* average = nullptr);

}  // namespace tula::train
