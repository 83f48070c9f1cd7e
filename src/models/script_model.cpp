#include "models/script_model.hpp"

#include <fmt/ranges.h>
#include <torch/script.h>

#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/atomic_file.hpp"
#include "common/confined_path.hpp"
#include "common/input_roots.hpp"

namespace tula::models {
namespace {

namespace fs = std::filesystem;

using Check = ScriptModelDescription::Check;

// LibTorch's messages carry a C++ backtrace and a Python-side trace; the
// first line says what went wrong.
std::string first_line(const std::string& message) { return message.substr(0, message.find('\n')); }

// The interpreter's errors start with "The following operation failed..."
// and a TorchScript traceback; the reason is the last "Error: " line.
std::string error_text(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  const std::string message = c10 ? c10->what_without_backtrace() : e.what();
  const auto reason = message.rfind("Error: ");
  if (reason == std::string::npos) return first_line(message);
  return first_line(message.substr(reason + 7));
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

// The module's bytes, opened beneath its data root when this process reads
// under roots (a job of `tula serve`: common/input_roots.hpp).
std::string confined_module_bytes(const std::string& path) {
  const common::Fd fd = common::open_input(path, O_RDONLY | O_NONBLOCK);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    throw std::invalid_argument("model file '" + path + "' is not a regular file");
  }
  return common::read_whole(fd, path);
}

torch::jit::Module read_module(const std::string& path) {
  const bool confined = !common::input_roots().empty();
  std::error_code ec;
  if (!confined && !fs::is_regular_file(path, ec)) {
    throw std::invalid_argument("model file '" + path + "' does not exist or is not a regular file");
  }
  std::istringstream bytes(confined ? confined_module_bytes(path) : std::string());
  try {
    if (confined) return torch::jit::load(bytes, torch::kCPU);
    return torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    throw std::invalid_argument("model file '" + path + "' is not a TorchScript module LibTorch can read (" +
                                error_text(e) + "); save one from Python with torch.jit.script(model).save(path)");
  }
}

Check dtype_check(const torch::jit::Module& module) {
  for (const auto& p : module.named_parameters(/*recurse=*/true)) {
    if (p.value.scalar_type() != torch::kFloat) {
      return {"parameters are float32", false,
              "parameter '" + p.name + "' is " + std::string(p.value.dtype().name()) +
                  "; call model.float() before saving"};
    }
  }
  return {"parameters are float32", true, ""};
}

Check trainable_check(const torch::jit::Module& module) {
  int64_t trainable = 0;
  for (const auto& p : module.named_parameters(true)) trainable += p.value.requires_grad() ? p.value.numel() : 0;
  if (trainable > 0) return {"has trainable parameters", true, fmt::format("{} trainable elements", trainable)};
  return {"has trainable parameters", false,
          "no parameter requires grad: save the model without freezing it (torch.jit.freeze and "
          "requires_grad_(False) make it untrainable)"};
}

// A forward pass on a batch of two zero images, in eval mode so that batch
// norm's running statistics stay as saved.
Check forward_check(torch::jit::Module& module, const ModelOptions& o) {
  const std::vector<int64_t> input = {2, o.channels, o.image_size, o.image_size};
  const std::string what = fmt::format("forward maps {} to logits [2, {}]", shape_text(input), o.classes);
  const bool was_training = module.is_training();
  module.eval();
  torch::jit::IValue out;
  try {
    torch::NoGradGuard no_grad;
    out = module.forward({torch::zeros(input)});
  } catch (const std::exception& e) {
    module.train(was_training);
    return {what, false,
            fmt::format("the forward fails on a batch of {} ({}); it must take the data's {}-channel {}x{} images: "
                        "export a model for that input, or resize the images to what it takes with --image-size",
                        shape_text(input), error_text(e), o.channels, o.image_size, o.image_size)};
  }
  module.train(was_training);
  if (!out.isTensor()) {
    return {what, false,
            "the forward returns a " + out.tagKind() + ", not one logits tensor; return only the logits "
            "(e.g. the first element of a tuple, or the 'out' entry of a dict)"};
  }
  const auto logits = out.toTensor();
  if (logits.dim() != 2 || logits.size(0) != 2) {
    return {what, false,
            "the forward returns a tensor of shape " + shape_text(logits.sizes().vec()) +
                " for a batch of 2; it must be [batch, classes] (flatten before the classifier)"};
  }
  if (logits.size(1) != o.classes) {
    return {what, false,
            fmt::format("the model has {} outputs but the data has {} classes; give its last layer {} outputs",
                        logits.size(1), o.classes, o.classes)};
  }
  return {what, true, ""};
}

std::vector<Check> run_checks(torch::jit::Module& module, const ModelOptions& o) {
  std::vector<Check> checks = {dtype_check(module), trainable_check(module)};
  // A forward on float input needs float weights: run it only when they are.
  if (checks[0].passed) checks.push_back(forward_check(module, o));
  return checks;
}

// The module's tensors, each registered under its dotted name in a tree of
// plain modules mirroring the script module's submodules: the same tensors,
// not copies, so what the trainer changes (values, device, a checkpoint's
// weights) the script module computes with.
class ScriptNet : public Net {
 public:
  explicit ScriptNet(torch::jit::Module module) : Net("ScriptModule"), module_(std::move(module)) {
    for (const auto& p : module_.named_parameters(true)) {
      const auto [owner, leaf] = place(p.name);
      if (p.value.requires_grad()) {
        owner->register_parameter(leaf, p.value, true);
      } else {
        owner->register_buffer(leaf, p.value);
      }
    }
    for (const auto& b : module_.named_buffers(true)) {
      const auto [owner, leaf] = place(b.name);
      owner->register_buffer(leaf, b.value);
    }
  }

  torch::Tensor forward(torch::Tensor x) override { return module_.forward({std::move(x)}).toTensor(); }

  void train(bool on) override {
    Net::train(on);
    module_.train(on);
  }

  torch::jit::Module& script() { return module_; }

 private:
  struct Place {
    torch::nn::Module* owner;
    std::string leaf;
  };

  // The module that holds `dotted`'s last component, made on first use.
  Place place(const std::string& dotted) {
    torch::nn::Module* owner = this;
    std::string rest = dotted;
    for (auto dot = rest.find('.'); dot != std::string::npos; dot = rest.find('.')) {
      const std::string child = rest.substr(0, dot);
      rest = rest.substr(dot + 1);
      const auto found = owner->named_children().find(child);
      owner = found ? found->get() : owner->register_module(child, std::make_shared<torch::nn::Module>(child)).get();
    }
    return {owner, rest};
  }

  torch::jit::Module module_;
};

}  // namespace

bool ScriptModelDescription::trainable() const {
  for (const auto& c : checks) {
    if (!c.passed) return false;
  }
  return true;
}

ScriptModelDescription describe_script_model(const std::string& path, const ModelOptions& options) {
  auto module = read_module(path);
  ScriptModelDescription d;
  d.path = path;
  for (const auto& p : module.named_parameters(true)) {
    const bool trainable = p.value.requires_grad();
    d.tensors.push_back({p.name, p.value.sizes().vec(), p.value.numel(),
                         std::string(p.value.dtype().name()), trainable ? "parameter" : "frozen parameter"});
    (trainable ? d.trainable_parameters : d.frozen_elements) += p.value.numel();
  }
  for (const auto& b : module.named_buffers(true)) {
    d.tensors.push_back({b.name, b.value.sizes().vec(), b.value.numel(),
                         std::string(b.value.dtype().name()), "buffer"});
    d.frozen_elements += b.value.numel();
  }
  d.checks = run_checks(module, options);
  return d;
}

std::shared_ptr<Net> load_script_model(const std::string& path, const ModelOptions& options) {
  auto module = read_module(path);
  for (const auto& check : run_checks(module, options)) {
    if (!check.passed) throw std::invalid_argument("model '" + path + "': " + check.detail);
  }
  module.train(true);
  return std::make_shared<ScriptNet>(std::move(module));
}

int64_t script_model_input_channels(const std::string& path) {
  const auto module = read_module(path);
  for (const auto& p : module.named_parameters(true)) {
    if (p.value.dim() == 4) return p.value.size(1);
  }
  return 0;
}

bool is_script_model(const Net& net) { return dynamic_cast<const ScriptNet*>(&net) != nullptr; }

void export_script_model(Net& net, const std::string& path, const std::map<std::string, std::string>& extra_files) {
  auto* script = dynamic_cast<ScriptNet*>(&net);
  if (script == nullptr) {
    throw std::invalid_argument("--export writes TorchScript and needs a model given as a TorchScript file "
                                "(--model PATH.pt); zoo models are C++ modules");
  }
  // A copy, so that the module being trained keeps its mode and device.
  auto copy = script->script().clone();
  copy.eval();
  copy.to(torch::kCPU);
  torch::jit::ExtraFilesMap extra(extra_files.begin(), extra_files.end());
  common::write_atomically(path, [&](const std::string& temporary) { copy.save(temporary, extra); });
}

}  // namespace tula::models
