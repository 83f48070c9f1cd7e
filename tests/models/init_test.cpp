// Weight initialization follows each reference implementation, checked by
// the statistics of large tensors (tolerances are many standard errors wide).
#include <gtest/gtest.h>

#include <cmath>

#include <torch/torch.h>

#include "models/zoo.hpp"

namespace tula::models {
namespace {

torch::Tensor param(const std::shared_ptr<Net>& net, const std::string& key) {
  const auto params = net->named_parameters();
  const auto* found = params.find(key);
  if (found == nullptr) throw std::runtime_error("no parameter " + key);
  return found->detach();
}

double stddev(const torch::Tensor& t) { return t.std().item<double>(); }
double max_abs(const torch::Tensor& t) { return t.abs().max().item<double>(); }

class InitTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(1); }
};

TEST_F(InitTest, ResNetKaimingFanOutConvsUnitBatchNormsDefaultFc) {
  const auto net = make_model("resnet18", ModelOptions{3, 1000, 224});
  // kaiming_normal_(mode="fan_out", nonlinearity="relu"): std = sqrt(2 / (out * k * k)).
  EXPECT_NEAR(stddev(param(net, "layer4.0.conv2.weight")), std::sqrt(2.0 / (512 * 9)), 0.002);
  EXPECT_NEAR(stddev(param(net, "conv1.weight")), std::sqrt(2.0 / (64 * 49)), 0.002);
  EXPECT_TRUE(param(net, "layer2.0.bn1.weight").eq(1).all().item<bool>());
  EXPECT_TRUE(param(net, "layer2.0.bn1.bias").eq(0).all().item<bool>());
  // PyTorch's default Linear init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  const double bound = 1.0 / std::sqrt(512.0);
  EXPECT_LE(max_abs(param(net, "fc.weight")), bound);
  EXPECT_NEAR(stddev(param(net, "fc.weight")), bound / std::sqrt(3.0), 0.002);
  EXPECT_LE(max_abs(param(net, "fc.bias")), bound);
  EXPECT_GT(max_abs(param(net, "fc.bias")), 0.0);
}

TEST_F(InitTest, VggNormalLinearZeroBiases) {
  const auto net = make_model("vgg11_bn", ModelOptions{1, 10, 32});
  EXPECT_NEAR(stddev(param(net, "features.25.weight")), std::sqrt(2.0 / (512 * 9)), 0.002);
  EXPECT_TRUE(param(net, "features.0.bias").eq(0).all().item<bool>());
  EXPECT_NEAR(stddev(param(net, "classifier.3.weight")), 0.01, 0.0005);
  EXPECT_NEAR(param(net, "classifier.3.weight").mean().item<double>(), 0.0, 0.0005);
  EXPECT_TRUE(param(net, "classifier.6.bias").eq(0).all().item<bool>());
  EXPECT_TRUE(param(net, "features.1.weight").eq(1).all().item<bool>());
}

TEST_F(InitTest, MobileNetV3KaimingFanOutAndNormalLinear) {
  const auto net = make_model("mobilenet_v3_large", ModelOptions{3, 1000, 224});
  // Depthwise 5x5 over 672 channels: PyTorch's fan_out ignores groups, 672 * 25.
  EXPECT_NEAR(stddev(param(net, "features.13.block.1.0.weight")), std::sqrt(2.0 / (672 * 25)), 0.001);
  EXPECT_NEAR(stddev(param(net, "features.16.0.weight")), std::sqrt(2.0 / 960), 0.002);
  EXPECT_TRUE(param(net, "features.13.block.2.fc1.bias").eq(0).all().item<bool>());
  EXPECT_NEAR(stddev(param(net, "classifier.0.weight")), 0.01, 0.0005);
  EXPECT_TRUE(param(net, "classifier.3.bias").eq(0).all().item<bool>());
}

TEST_F(InitTest, AlexNetKeepsPyTorchDefaults) {
  const auto net = make_model("alexnet", ModelOptions{3, 1000, 224});
  // kaiming_uniform_(a=sqrt(5)) gives U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  const double bound = 1.0 / std::sqrt(4096.0);
  EXPECT_LE(max_abs(param(net, "classifier.4.weight")), bound);
  EXPECT_NEAR(stddev(param(net, "classifier.4.weight")), bound / std::sqrt(3.0), 0.0005);
  EXPECT_GT(max_abs(param(net, "classifier.4.bias")), 0.0);
}

TEST_F(InitTest, CifarResNetKaimingFanIn) {
  const auto net = make_model("resnet56", ModelOptions{3, 10, 32});
  // kaiming_normal_ defaults: fan_in, gain sqrt(2).
  EXPECT_NEAR(stddev(param(net, "layer3.4.conv2.weight")), std::sqrt(2.0 / (64 * 9)), 0.003);
  EXPECT_NEAR(stddev(param(net, "linear.weight")), std::sqrt(2.0 / 64), 0.03);
}

}  // namespace
}  // namespace tula::models
