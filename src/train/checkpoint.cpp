#include "train/checkpoint.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <torch/torch.h>

#include "common/atomic_file.hpp"

namespace tula::train {
namespace fs = std::filesystem;

nlohmann::json CheckpointState::to_json() const {
  return {{"format", "tula-checkpoint-1"}, {"epoch", epoch}, {"step_in_epoch", step_in_epoch},
          {"global_step", global_step}, {"global_batch", global_batch}, {"world_size", world_size},
          {"seed", seed}, {"model", model}, {"dataset", dataset}, {"input", input}};
}

CheckpointState CheckpointState::from_json(const nlohmann::json& j) {
  if (j.value("format", "") != "tula-checkpoint-1") {
    throw std::runtime_error("unknown checkpoint format '" + j.value("format", "") + "'");
  }
  CheckpointState s;
  s.epoch = j.at("epoch");
  s.step_in_epoch = j.at("step_in_epoch");
  s.global_step = j.at("global_step");
  s.global_batch = j.at("global_batch");
  s.world_size = j.at("world_size");
  s.seed = j.at("seed");
  s.model = j.at("model");
  s.dataset = j.at("dataset");
  s.input = j.value("input", nlohmann::json());
  return s;
}

std::string checkpoint_path(const std::string& dir) { return (fs::path(dir) / "latest.pt").string(); }

void save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                     const optim::Optimizer& optimizer, const CheckpointState& state, bool keep_copy,
                     const WeightAverage* average) {
  fs::create_directories(dir);
  common::write_atomically(checkpoint_path(dir), [&](const std::string& path) {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive;
    model.save(model_archive);
    archive.write("model", model_archive);
    torch::serialize::OutputArchive optim_archive;
    optimizer.save(optim_archive);
    archive.write("optimizer", optim_archive);
    if (average) {
      torch::serialize::OutputArchive average_archive;
      average->save(average_archive);
      archive.write("average", average_archive);
    }
    archive.write("state", c10::IValue(state.to_json().dump()));
    archive.save_to(path);
  });
  if (keep_copy) {
    const fs::path kept = fs::path(dir) / ("step-" + std::to_string(state.global_step) + ".pt");
    std::error_code ec;
    fs::remove(kept, ec);
    fs::create_hard_link(checkpoint_path(dir), kept, ec);
    if (ec) fs::copy_file(checkpoint_path(dir), kept, fs::copy_options::overwrite_existing);
  }
  common::write_file_atomically((fs::path(dir) / "latest.json").string(), state.to_json().dump(2) + "\n");
}

std::optional<CheckpointState> load_checkpoint(const std::string& dir, torch::nn::Module& model,
                                               optim::Optimizer& optimizer, const torch::Device& device,
                                               WeightAverage* average) {
  const std::string path = checkpoint_path(dir);
  if (!fs::exists(path)) return std::nullopt;
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path, device);
    c10::IValue state_value;
    if (!archive.try_read("state", state_value)) throw std::runtime_error("no training state");
    auto state = CheckpointState::from_json(nlohmann::json::parse(state_value.toStringRef()));
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
    torch::serialize::InputArchive optim_archive;
    archive.read("optimizer", optim_archive);
    optimizer.load(optim_archive);
    if (average) {
      torch::serialize::InputArchive average_archive;
      if (archive.try_read("average", average_archive)) {
        average->load(average_archive);
      } else {
        average->reset();
      }
    }
    return state;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error("cannot resume from checkpoint " + path + ": " + what.substr(0, what.find('\n')));
  }
}

CheckpointState read_checkpoint_state(const std::string& path) {
  if (!fs::exists(path)) throw std::runtime_error("checkpoint " + path + " does not exist");
  try {
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    c10::IValue state_value;
    if (!archive.try_read("state", state_value)) throw std::runtime_error("no training state");
    return CheckpointState::from_json(nlohmann::json::parse(state_value.toStringRef()));
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error("cannot read checkpoint " + path + ": " + what.substr(0, what.find('\n')));
  }
}

CheckpointState load_model_from_checkpoint(const std::string& path, torch::nn::Module& model) {
  auto state = read_checkpoint_state(path);
  try {
    torch::serialize::InputArchive archive, model_archive;
    archive.load_from(path);
    archive.read("model", model_archive);
    model.load(model_archive);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw std::runtime_error("cannot load the model from checkpoint " + path + ": " + what.substr(0, what.find('\n')));
  }
  return state;
}

}  // namespace tula::train
