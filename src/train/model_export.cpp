#include "train/model_export.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "common/text.hpp"
#include "models/script_model.hpp"

namespace tula::train {
namespace {

std::string numbers(const std::vector<double>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + common::format_number(values[i], 4);
  return text + "]";
}

}  // namespace

std::string export_info(const ExportedRun& run) {
  nlohmann::json info;
  // Images are scaled to [0, 1] (bytes / 255) before the normalization.
  info["input"] = {{"channels", run.channels}, {"height", run.image_size}, {"width", run.image_size}, {"scale", "0-1"}};
  info["normalize"] = {{"mean", run.normalization.mean}, {"std", run.normalization.std}};
  info["classes"] = run.classes;
  info["trained"] = {{"dataset", run.dataset}, {"steps", run.steps}, {"epochs", run.epochs}};
  if (run.accuracy) {
    info["trained"]["accuracy"] = *run.accuracy;
    info["trained"]["evaluated_on"] = run.evaluated_on;
  }
  return info.dump(2);
}

std::string export_trained_model(models::Net& net, const std::string& path, const ExportedRun& run) {
  models::export_script_model(net, path, {{kExportInfoFile, export_info(run)}});
  std::string line = fmt::format("exported the trained model to {} (input {}x{}x{} scaled to [0, 1]", path,
                                 run.channels, run.image_size, run.image_size);
  if (run.normalization.mean.empty()) return line + ", not normalized)";
  return line + ", then normalized with mean " + numbers(run.normalization.mean) + " and std " +
         numbers(run.normalization.std) + "; both in its extra file " + kExportInfoFile + ")";
}

}  // namespace tula::train
