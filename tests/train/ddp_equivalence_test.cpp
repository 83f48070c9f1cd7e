// The defining property of data-parallel SGD: N workers at per-worker batch b
// take the same steps as one worker at batch N*b (for a model without batch
// norm or dropout, whose forward does not depend on how the batch is split).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "helpers/checkpoint_weights.hpp"
#include "helpers/free_port.hpp"
#include "helpers/metrics_records.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;


class DdpEquivalence : public ::testing::Test {
 protected:
  std::string common_args() const {
    return " --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 512"
           " --max-steps 6 --lr 0.05 --momentum 0.9 --weight-decay 1e-4 --schedule constant --no-eval"
           " --no-augment --dropout 0 --checkpoint-every 6 --threads 1 --progress none --seed 11";
  }
  // The checkpoints two runs left in dir_ / a and dir_ / b hold the same weights, to float rounding.
  void expect_same_weights(const std::string& a, const std::string& b) const {
    const auto wa = testing::checkpoint_weights((dir_ / a).string(), "small_cnn", {1, 10, 28});
    const auto wb = testing::checkpoint_weights((dir_ / b).string(), "small_cnn", {1, 10, 28});
    ASSERT_EQ(wa.size(), wb.size());
    ASSERT_FALSE(wa.empty());
    for (size_t i = 0; i < wa.size(); ++i) {
      EXPECT_TRUE(torch::allclose(wa[i], wb[i], 1e-4, 1e-5))
          << "tensor " << i << " max diff " << (wa[i] - wb[i]).abs().max().item<float>();
    }
  }
  const testing::TempDir temp_{"tula-ddp"};
  const fs::path dir_ = temp_.path();
};

TEST_F(DdpEquivalence, TwoWorkersEqualOneWorkerAtTwiceTheBatch) {
  const std::string tula = testing::tula_binary();
  auto one = testing::run_command(tula + " train" + common_args() + " --batch-size 32 --checkpoint-dir " +
                                  (dir_ / "one").string());
  ASSERT_EQ(one.exit_code, 0) << one.output;
  auto two = testing::run_on_free_port([&](const std::string& port) {
    return tula + " train --nproc 2 --master-port " + port + common_args() +
           " --batch-size 16 --bucket-mb 0.05 --checkpoint-dir " + (dir_ / "two").string();
  });
  ASSERT_EQ(two.exit_code, 0) << two.output;
  expect_same_weights("one", "two");
}

// A noise probe splits a lone worker's batch in two halves and reads the first
// half's gradient: the step's gradient, and so its weights, stay what they are.
TEST_F(DdpEquivalence, ANoiseProbedWorkerTakesTheStepsOfAnUnprobedOne) {
  const std::string tula = testing::tula_binary();
  auto plain = testing::run_command(tula + " train" + common_args() + " --batch-size 32 --checkpoint-dir " +
                                    (dir_ / "plain").string());
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  const auto metrics = dir_ / "probed.jsonl";
  auto probed = testing::run_command(tula + " train" + common_args() + " --batch-size 32 --noise-probe-every 2" +
                                     " --metrics " + metrics.string() + " --checkpoint-dir " +
                                     (dir_ / "probed").string());
  ASSERT_EQ(probed.exit_code, 0) << probed.output;
  expect_same_weights("plain", "probed");
  const auto steps = testing::records_of_type(metrics, "iter");
  ASSERT_EQ(steps.size(), 6u);
  double half = 0, whole = 0;
  for (const auto& step : steps) {
    const bool due = step["step"].get<int>() % 2 == 1;  // every second step, from the first
    EXPECT_EQ(step.contains("probe_batch"), due) << step.dump();
    if (!due) continue;
    EXPECT_EQ(step["probe_batch"], 16) << step.dump();
    half += step["local_grad_sq"].get<double>();
    whole += step["global_grad_sq"].get<double>();
  }
  // Half the batch is the noisier gradient: on the mean, its squared norm is the larger.
  EXPECT_GT(half, whole);
}

}  // namespace
}  // namespace tula::train
