// `tula models`: the zoo with each model's size for a given input and class
// count, as a table or as JSON for scripts (tests/models/compare_torchvision.py);
// `tula models --describe PATH.pt`: a user's TorchScript model, its tensors and
// whether it can be trained on that input.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "models/script_model.hpp"
#include "models/zoo.hpp"

namespace tula::cli {
namespace {

struct ModelsCommand {
  bool json = false;
  int64_t channels = 3;
  int64_t classes = 1000;
  int64_t image_size = 224;
  std::string describe;  // a TorchScript file
};

std::string human_bytes(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return shape.empty() ? "scalar" : fmt::format("{}", fmt::join(shape, "x"));
}

nlohmann::json description_json(const models::ScriptModelDescription& d) {
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : d.tensors) {
    tensors.push_back({{"name", t.name}, {"shape", t.shape}, {"elements", t.elements}, {"dtype", t.dtype},
                       {"kind", t.kind}});
  }
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : d.checks) checks.push_back({{"check", c.what}, {"passed", c.passed}, {"detail", c.detail}});
  return {{"path", d.path}, {"tensors", tensors}, {"trainable_parameters", d.trainable_parameters},
          {"frozen_elements", d.frozen_elements}, {"checks", checks}, {"trainable", d.trainable()}};
}

void print_description(const models::ScriptModelDescription& d) {
  std::printf("%s\n%-48s %-18s %-8s %s\n", d.path.c_str(), "tensor", "shape", "dtype", "kind");
  for (const auto& t : d.tensors) {
    std::printf("%-48s %-18s %-8s %s\n", t.name.c_str(), shape_text(t.shape).c_str(), t.dtype.c_str(), t.kind.c_str());
  }
  std::printf("trainable parameters: %lld; frozen or buffer elements: %lld\n",
              static_cast<long long>(d.trainable_parameters), static_cast<long long>(d.frozen_elements));
  for (const auto& c : d.checks) {
    std::printf("%-6s %s%s%s\n", c.passed ? "ok" : "FAILED", c.what.c_str(), c.detail.empty() ? "" : ": ",
                c.detail.c_str());
  }
}

// Prints the description; a model that fails a check ends the command with
// that check's reason (a non-zero exit).
void describe(const ModelsCommand& cmd) {
  const auto d = models::describe_script_model(cmd.describe, {cmd.channels, cmd.classes, cmd.image_size});
  if (cmd.json) {
    std::cout << description_json(d).dump(2) << std::endl;
  } else {
    print_description(d);
  }
  for (const auto& c : d.checks) {
    if (!c.passed) throw std::invalid_argument("model '" + d.path + "' cannot be trained as it is: " + c.detail);
  }
}

void run(const ModelsCommand& cmd) {
  if (cmd.channels < 1 || cmd.classes < 1 || cmd.image_size < 1) {
    throw std::invalid_argument("--channels, --classes and --image-size must be positive");
  }
  if (!cmd.describe.empty()) return describe(cmd);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& info : models::model_catalog()) {
    // Every model pools adaptively before its classifier, so sizes do not
    // depend on the image size: a model that rejects the requested size is
    // still listed, measured at its minimum and flagged.
    const bool accepts = cmd.image_size >= info.min_image_size;
    models::ModelOptions options{cmd.channels, cmd.classes, std::max(cmd.image_size, info.min_image_size)};
    const auto net = models::make_model(info.name, options);
    rows.push_back({{"name", info.name},
                    {"family", info.family},
                    {"description", info.description},
                    {"parameters", models::parameter_count(*net)},
                    {"weight_bytes", models::weight_bytes(*net)},
                    {"min_image_size", info.min_image_size},
                    {"accepts_image_size", accepts},
                    {"channels", cmd.channels},
                    {"classes", cmd.classes},
                    {"image_size", cmd.image_size}});
  }
  if (cmd.json) {
    std::cout << rows.dump(2) << std::endl;
    return;
  }
  std::printf("%d channel(s), %lld classes, %lldx%lld images\n", static_cast<int>(cmd.channels),
              static_cast<long long>(cmd.classes), static_cast<long long>(cmd.image_size),
              static_cast<long long>(cmd.image_size));
  std::printf("%-20s %-10s %14s %12s %9s\n", "model", "family", "parameters", "weights", "min size");
  for (const auto& row : rows) {
    const std::string note = row["accepts_image_size"].get<bool>() ? "" : "  (needs a larger image)";
    std::printf("%-20s %-10s %14lld %12s %9lld%s\n", row["name"].get<std::string>().c_str(),
                row["family"].get<std::string>().c_str(), static_cast<long long>(row["parameters"].get<int64_t>()),
                human_bytes(row["weight_bytes"].get<int64_t>()).c_str(),
                static_cast<long long>(row["min_image_size"].get<int64_t>()), note.c_str());
  }
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto cmd = std::make_shared<ModelsCommand>();
  auto* sub = app.add_subcommand("models", "List the CNN zoo with parameter counts and weight sizes");
  sub->add_flag("--json", cmd->json, "Print a JSON array instead of a table");
  sub->add_option("--channels", cmd->channels, "Input channels")->capture_default_str();
  sub->add_option("--classes", cmd->classes, "Number of classes")->capture_default_str();
  sub->add_option("--image-size", cmd->image_size, "Square input size")->capture_default_str();
  sub->add_option("--describe", cmd->describe,
                  "A TorchScript file: list its tensors and check it can be trained on this input");
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
