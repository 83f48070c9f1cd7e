// A user's own model: a module saved from Python with torch.jit.script or
// torch.jit.trace and .save(). It is trained as a zoo model is: the module's
// parameters and buffers are the very tensors the trainer, the reducer, the
// optimizers and checkpoints see, under the module's own dotted names
// ("layer1.0.conv1.weight"), and the trained module is written back as
// TorchScript that Python's torch.jit.load reads.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "models/zoo.hpp"

namespace tula::models {

// Loads `path` and checks that it can be trained on inputs of options.channels
// x options.image_size^2 with options.classes classes: float32 parameters, at
// least one of them trainable, and a forward that maps a batch to one logits
// tensor [batch, classes]. Throws std::invalid_argument saying which check
// failed and what to do. Parameters saved with requires_grad false are kept
// frozen (held as buffers: checkpointed and moved, never trained or reduced).
std::shared_ptr<Net> load_script_model(const std::string& path, const ModelOptions& options);

// One tensor of a loaded module, for `tula models --describe`.
struct ScriptTensor {
  std::string name;
  std::vector<int64_t> shape;
  int64_t elements = 0;
  std::string dtype;
  // "parameter" (trained), "frozen parameter" (saved with requires_grad
  // false) or "buffer" (e.g. batch-norm statistics).
  std::string kind;
};

struct ScriptModelDescription {
  std::string path;
  std::vector<ScriptTensor> tensors;
  int64_t trainable_parameters = 0;
  int64_t frozen_elements = 0;  // frozen parameters and buffers
  // Each check load_script_model makes, passed or with the reason it failed.
  struct Check {
    std::string what;
    bool passed = false;
    std::string detail;
  };
  std::vector<Check> checks;
  bool trainable() const;
};

// Every tensor of `path` and the result of each check for `options`; throws
// std::invalid_argument only when the file is not a TorchScript module.
ScriptModelDescription describe_script_model(const std::string& path, const ModelOptions& options);

// The input channels of the module's first 4-D parameter (its first
// convolution's weight, [out, in, kh, kw]), 0 when it has none. Throws like
// load_script_model when the file is not a TorchScript module.
int64_t script_model_input_channels(const std::string& path);

// True for a model loaded by load_script_model.
bool is_script_model(const Net& net);

// Writes the module of a script model (with its current weights, in eval
// mode, on the CPU) to `path` as TorchScript, with `extra_files` stored
// beside it (readable in Python through torch.jit.load's _extra_files).
// Written whole or not at all. Throws std::invalid_argument for a zoo model.
void export_script_model(Net& net, const std::string& path, const std::map<std::string, std::string>& extra_files);

}  // namespace tula::models
