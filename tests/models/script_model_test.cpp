// A user's TorchScript model, as `--model PATH.pt` loads it: the modules are
// written by PyTorch itself (tests/models/make_script_models.py), once for
// the whole suite.
#include <gtest/gtest.h>

#include <torch/script.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers/expect_error.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "models/script_model.hpp"

namespace tula::models {
namespace {

using testing::CommandResult;
using testing::run_command;
using TempDir = testing::TempDir;

class ScriptModel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("tula-script-models");
    const auto r = run_command("/usr/bin/python3 " + std::string(TULA_SOURCE_DIR) +
                                   "/tests/models/make_script_models.py " + dir_->str(),
                               180);
    ASSERT_EQ(r.exit_code, 0) << "PyTorch could not write the test modules:\n" << r.output;
    std::ifstream in(dir_->path() / "names.json");
    names_ = new nlohmann::json(nlohmann::json::parse(in));
  }
  static void TearDownTestSuite() {
    delete names_;
    delete dir_;
  }

  static std::string file(const std::string& name) { return (dir_->path() / name).string(); }
  static const nlohmann::json& names(const std::string& name) { return (*names_)[name]; }

  static ModelOptions fashion() { return {1, 10, 28}; }

  static TempDir* dir_;
  static nlohmann::json* names_;
};

TempDir* ScriptModel::dir_ = nullptr;
nlohmann::json* ScriptModel::names_ = nullptr;

std::vector<std::string> keys_of(const torch::OrderedDict<std::string, torch::Tensor>& dict) {
  std::vector<std::string> keys;
  for (const auto& item : dict) keys.push_back(item.key());
  return keys;
}

TEST_F(ScriptModel, ScriptedAndTracedModulesLoadWithPyTorchsNamesInPyTorchsOrder) {
  for (const std::string name : {"net.pt", "traced.pt"}) {
    const auto net = load_script_model(file(name), fashion());
    EXPECT_TRUE(is_script_model(*net));
    EXPECT_EQ(keys_of(net->named_parameters()), names(name)["parameters"].get<std::vector<std::string>>()) << name;
    EXPECT_EQ(keys_of(net->named_buffers()), names(name)["buffers"].get<std::vector<std::string>>()) << name;
    const auto out = net->forward(torch::rand({4, 1, 28, 28}));
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{4, 10})) << name;
  }
}

TEST_F(ScriptModel, WhatTheTrainerChangesTheModuleComputesWith) {
  const auto net = load_script_model(file("net.pt"), fashion());
  net->eval();
  const auto x = torch::rand({2, 1, 28, 28});
  const auto before = net->forward(x).detach().clone();
  {
    torch::NoGradGuard no_grad;
    net->named_parameters()["classifier.bias"].add_(1.0);  // in place, as every optimizer updates
  }
  EXPECT_TRUE(torch::allclose(net->forward(x).detach(), before + 1.0, 1e-5, 1e-5));
  // Gradients reach the registered tensors.
  net->train();
  net->zero_grad();
  torch::nn::functional::cross_entropy(net->forward(torch::rand({4, 1, 28, 28})), torch::tensor({0, 1, 2, 3}))
      .backward();
  for (const auto& p : net->named_parameters()) EXPECT_TRUE(p.value().grad().defined()) << p.key();
}

TEST_F(ScriptModel, TrainAndEvalModesReachTheModule) {
  const auto net = load_script_model(file("net.pt"), fashion());
  const auto x = torch::rand({8, 1, 28, 28});
  const auto mean_before = net->named_buffers()["features.0.bn.running_mean"].clone();
  net->eval();
  net->forward(x);
  EXPECT_TRUE(torch::equal(net->named_buffers()["features.0.bn.running_mean"], mean_before))
      << "batch norm in eval mode keeps its statistics";
  net->train();
  net->forward(x);
  EXPECT_FALSE(torch::equal(net->named_buffers()["features.0.bn.running_mean"], mean_before))
      << "batch norm in train mode updates them";
}

TEST_F(ScriptModel, WeightsSavedThroughTheModuleLoadIntoAFreshCopy) {
  const auto trained = load_script_model(file("net.pt"), fashion());
  {
    torch::NoGradGuard no_grad;
    for (auto& p : trained->parameters()) p.mul_(0.5).add_(0.25);
  }
  std::stringstream archive_bytes;
  {
    torch::serialize::OutputArchive archive;
    trained->save(archive);
    archive.save_to(archive_bytes);
  }
  const auto fresh = load_script_model(file("net.pt"), fashion());
  torch::serialize::InputArchive archive;
  archive.load_from(archive_bytes);
  fresh->load(archive);
  trained->eval();
  fresh->eval();
  const auto x = torch::rand({3, 1, 28, 28});
  EXPECT_TRUE(torch::equal(fresh->forward(x), trained->forward(x)));
}

TEST_F(ScriptModel, FrozenParametersAreKeptAsBuffers) {
  const auto net = load_script_model(file("partly_frozen.pt"), fashion());
  const auto trained = keys_of(net->named_parameters());
  EXPECT_EQ(trained, (std::vector<std::string>{"classifier.weight", "classifier.bias"}));
  EXPECT_TRUE(net->named_buffers().contains("features.0.conv.weight"));
}

TEST_F(ScriptModel, AModuleThatCannotBeTrainedIsRefusedSayingWhatToDo) {
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("frozen.pt"), fashion()); }, {"no parameter requires grad"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("tuple.pt"), fashion()); }, {"not one logits tensor"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("unflattened.pt"), fashion()); }, {"it must be [batch, classes]"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("hundred_classes.pt"), fashion()); }, {"the model has 100 outputs but the data has 10 classes"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("double.pt"), fashion()); }, {"call model.float()"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("rgb.pt"), fashion()); }, {"it must take the data's 1-channel 28x28 images"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("not_a_module.pt"), fashion()); }, {"is not a TorchScript module"});
  testing::expect_error<std::invalid_argument>([&] { load_script_model(file("missing.pt"), fashion()); }, {"does not exist"});
}

TEST_F(ScriptModel, TheDescriptionListsEveryTensorAndEveryCheck) {
  const auto good = describe_script_model(file("net.pt"), fashion());
  EXPECT_TRUE(good.trainable());
  EXPECT_EQ(good.tensors.size(), names("net.pt")["parameters"].size() + names("net.pt")["buffers"].size());
  EXPECT_EQ(good.trainable_parameters, parameter_count(*load_script_model(file("net.pt"), fashion())));
  const auto bad = describe_script_model(file("hundred_classes.pt"), fashion());
  EXPECT_FALSE(bad.trainable());
  ASSERT_EQ(bad.checks.size(), 3u);
  EXPECT_TRUE(bad.checks[0].passed);
  EXPECT_TRUE(bad.checks[1].passed);
  EXPECT_FALSE(bad.checks[2].passed);
}

TEST_F(ScriptModel, AnExportHoldsTheTrainedWeightsAndTheExtraFiles) {
  const auto net = load_script_model(file("net.pt"), fashion());
  {
    torch::NoGradGuard no_grad;
    net->named_parameters()["classifier.bias"].add_(3.0);
  }
  TempDir out("tula-export");
  const auto path = (out.path() / "trained.pt").string();
  export_script_model(*net, path, {{"tula.json", R"({"normalize": {"mean": [0.5]}})"}});
  torch::jit::ExtraFilesMap extra{{"tula.json", ""}};
  auto reloaded = torch::jit::load(path, torch::kCPU, extra);
  EXPECT_EQ(extra["tula.json"], R"({"normalize": {"mean": [0.5]}})");
  EXPECT_FALSE(reloaded.is_training()) << "exported for inference";
  net->eval();
  const auto x = torch::rand({2, 1, 28, 28});
  EXPECT_TRUE(torch::equal(reloaded.forward({x}).toTensor(), net->forward(x)));
  for (const auto& entry : std::filesystem::directory_iterator(out.path())) {
    EXPECT_EQ(entry.path().filename(), "trained.pt") << "no temporary file is left";
  }
}

TEST_F(ScriptModel, AZooModelCannotBeExported) {
  const auto zoo = make_model("small_cnn", fashion());
  testing::expect_error<std::invalid_argument>([&] { export_script_model(*zoo, "/tmp/never-written.pt", {}); }, {"needs a model given"});
}

}  // namespace
}  // namespace tula::models
