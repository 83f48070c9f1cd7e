// `tula train --export PATH.pt`: the trained TorchScript module written back
// for Python, with what a user needs to feed it the same input (channels,
// size, the normalization applied) in an extra file "tula.json" inside it:
//   extra = {"tula.json": ""}; m = torch.jit.load(path, _extra_files=extra)
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "train/normalization.hpp"

namespace tula::models {
class Net;
}

namespace tula::train {

// The name of the extra file inside an exported module.
inline constexpr const char* kExportInfoFile = "tula.json";

struct ExportedRun {
  std::string dataset;
  int64_t channels = 0;
  int64_t image_size = 0;
  int64_t classes = 0;
  Normalization normalization;
  int64_t steps = 0;
  int64_t epochs = 0;
  std::optional<double> accuracy;  // the last evaluation's
  std::string evaluated_on;        // "test" or "validation"
};

// The content of tula.json: {"input": {"channels", "height", "width", "scale"},
// "normalize": {"mean", "std"}, "classes", "trained": {...}}.
std::string export_info(const ExportedRun& run);

// Writes `net` (a model loaded from TorchScript) to `path` with tula.json, and
// returns the line that tells the user what it holds.
std::string export_trained_model(models::Net& net, const std::string& path, const ExportedRun& run);

}  // namespace tula::train
