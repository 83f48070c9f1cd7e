// The evaluation's warm-up at launch runs the model and leaves nothing behind:
// the parameters, the buffers, the training mode and the evaluation's score.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include "data/formats.hpp"
#include "models/zoo.hpp"
#include "train/evaluate.hpp"

namespace tula::train {
namespace {

std::shared_ptr<data::Dataset> synthetic_set(int64_t size) {
  data::DatasetOptions o;
  o.name = "synthetic";
  o.synthetic_size = size;
  o.synthetic_shape = {1, 28, 28};
  return data::open_synthetic(o, data::Split::kTest);
}

data::TransformOptions evaluation_transform() {
  data::TransformOptions t;
  t.train = false;
  return t;
}

std::vector<torch::Tensor> state_of(const models::Net& net) {
  std::vector<torch::Tensor> state;
  for (const auto& p : net.parameters()) state.push_back(p.detach().clone());
  for (const auto& b : net.buffers()) state.push_back(b.detach().clone());
  return state;
}

TEST(WarmUpEvaluation, LeavesTheModelAndTheScoreAsTheyWere) {
  torch::manual_seed(3);
  // ResNet-20 has batch norm, whose running statistics an evaluation in training mode would move.
  auto net = models::make_model("resnet20", models::ModelOptions{1, 10, 28});
  const auto set = synthetic_set(150);  // shards of 75 and batches of 32: a last batch of 11
  const auto transform = evaluation_transform();
  const auto device = torch::Device(torch::kCPU);
  net->train();
  const auto before = evaluate(*net, set, transform, 32, 0, 2, nullptr, device);
  const auto state = state_of(*net);

  warm_up_evaluation(*net, set, transform, 32, 0, 2, device);

  EXPECT_TRUE(net->is_training()) << "the warm-up puts the model back in training mode";
  const auto after_state = state_of(*net);
  ASSERT_EQ(after_state.size(), state.size());
  for (size_t i = 0; i < state.size(); ++i) EXPECT_TRUE(torch::equal(after_state[i], state[i])) << "tensor " << i;
  const auto after = evaluate(*net, set, transform, 32, 0, 2, nullptr, device);
  EXPECT_EQ(after.samples, 75);
  EXPECT_DOUBLE_EQ(after.loss, before.loss);
  EXPECT_DOUBLE_EQ(after.accuracy, before.accuracy);
}

TEST(WarmUpEvaluation, TakesShardsSmallerThanABatchAndEmptyOnes) {
  auto net = models::make_model("lenet5", models::ModelOptions{1, 10, 28});
  const auto transform = evaluation_transform();
  const auto device = torch::Device(torch::kCPU);
  warm_up_evaluation(*net, synthetic_set(5), transform, 32, 0, 1, device);  // one short batch
  warm_up_evaluation(*net, synthetic_set(1), transform, 32, 1, 2, device);  // rank 1 of 2 has no sample
  EXPECT_TRUE(net->is_training());
}

}  // namespace
}  // namespace tula::train
