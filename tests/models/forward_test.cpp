// Forward (and backward) passes: output shapes, and that each catalog minimum
// image size is exactly the smallest the model accepts. Kept to small inputs
// and batches of 2 so the suite stays fast on a shared CPU.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "models/zoo.hpp"

namespace tula::models {
namespace {

torch::Tensor run(Net& net, int64_t batch, int64_t channels, int64_t size) {
  return net.forward(torch::randn({batch, channels, size, size}));
}

class ForwardTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(0); }
};

// Every model at its own minimum size, on one instance each (the big ones take
// seconds to initialize): in training mode the output has the right shape and
// every parameter gets a finite gradient; one pixel less fails inside the
// model, which shows the catalog minimum is tight (options.image_size only
// guards make_model).
TEST_F(ForwardTest, EveryModelRunsAtItsMinimumSizeAndNotBelow) {
  for (const auto& info : model_catalog()) {
    SCOPED_TRACE(info.name);
    const int64_t size = info.min_image_size;
    auto net = make_model(info.name, ModelOptions{3, 7, size});
    net->train();
    const auto out = run(*net, 2, 3, size);
    ASSERT_EQ(out.sizes(), (std::vector<int64_t>{2, 7}));
    out.pow(2).sum().backward();
    for (const auto& item : net->named_parameters()) {
      ASSERT_TRUE(item.value().grad().defined()) << item.key();
      ASSERT_TRUE(torch::isfinite(item.value().grad()).all().item<bool>()) << item.key();
    }
    if (size > 1) {
      torch::NoGradGuard no_grad;
      net->eval();
      EXPECT_ANY_THROW(run(*net, 1, 3, size - 1));
    }
  }
}

TEST_F(ForwardTest, TypicalInputs) {
  torch::NoGradGuard no_grad;
  struct Case {
    const char* name;
    int64_t channels, classes, size;
  };
  const Case cases[] = {
      {"small_cnn", 1, 10, 28},  {"small_cnn", 3, 10, 32},  {"small_cnn", 3, 100, 50},
      {"lenet5", 1, 10, 28},     {"lenet5", 3, 10, 32},     {"lenet5", 1, 10, 12},
      {"resnet20", 3, 10, 32},   {"resnet20", 1, 10, 28},   {"resnet20", 3, 10, 9},  // odd sizes halve to ceil
      {"resnet32", 3, 100, 32},  {"resnet56", 3, 10, 32},   {"resnet18", 1, 10, 28},
      {"resnet34", 3, 10, 32},   {"resnet50", 3, 10, 32},   {"mobilenet_v3_small", 1, 10, 28},
      {"mobilenet_v3_large", 3, 10, 32},  // vgg and alexnet: see the test above
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " size " + std::to_string(c.size));
    auto net = make_model(c.name, ModelOptions{c.channels, c.classes, c.size});
    net->eval();
    const auto out = run(*net, 2, c.channels, c.size);
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{2, c.classes}));
    EXPECT_TRUE(torch::isfinite(out).all().item<bool>());
  }
}

TEST_F(ForwardTest, ImageNetSize) {
  torch::NoGradGuard no_grad;
  for (const char* name : {"resnet18", "mobilenet_v3_small"}) {
    SCOPED_TRACE(name);
    auto net = make_model(name, ModelOptions{3, 1000, 224});
    net->eval();
    EXPECT_EQ(run(*net, 1, 3, 224).sizes(), (std::vector<int64_t>{1, 1000}));
  }
}

TEST_F(ForwardTest, EvalIsDeterministicAndBatchIndependent) {
  torch::NoGradGuard no_grad;
  auto net = make_model("mobilenet_v3_small", ModelOptions{3, 10, 32});
  net->eval();
  const auto x = torch::randn({3, 3, 32, 32});
  const auto all = net->forward(x);
  const auto one = net->forward(x.slice(0, 1, 2));
  EXPECT_TRUE(torch::allclose(all.slice(0, 1, 2), one, 1e-5, 1e-6));
}

TEST_F(ForwardTest, SameSeedSameWeights) {
  auto weights = [] {
    torch::manual_seed(42);
    auto net = make_model("resnet20", ModelOptions{3, 10, 32});
    std::vector<torch::Tensor> flat;
    for (const auto& p : net->parameters()) flat.push_back(p.detach().flatten());
    return torch::cat(flat);
  };
  EXPECT_TRUE(torch::equal(weights(), weights()));
}

}  // namespace
}  // namespace tula::models
