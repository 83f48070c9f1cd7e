// Data-parallel SGD's defining property on a GPU: two workers sharing one
// device over Gloo's CUDA collectives (or one GPU each over NCCL, where there
// are two) take the same steps as one worker at twice the batch. The CPU
// version is tests/train/ddp_equivalence_test.cpp; here the gradients, their
// allreduce and the update all happen on CUDA tensors.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "helpers/checkpoint_weights.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::train {
namespace {

namespace fs = std::filesystem;

TEST(CudaDdpEquivalence, TwoWorkersEqualOneWorkerAtTwiceTheBatch) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible (or a LibTorch without CUDA)";
  const bool two_gpus = torch::cuda::device_count() >= 2;
  const testing::TempDir temp{"tula-cuda-ddp"};
  // cuDNN may compute fp32 convolutions in TF32, whose 10-bit mantissa would
  // make the two runs differ by rounding alone; NVIDIA's libraries honour this
  // variable, so both runs compute in full fp32.
  const std::string env = "NVIDIA_TF32_OVERRIDE=0 ";
  const std::string common =
      " train --device cuda --model small_cnn --dataset synthetic --synthetic-shape 1x28x28 --synthetic-size 512"
      " --max-steps 6 --lr 0.05 --momentum 0.9 --weight-decay 1e-4 --schedule constant --no-eval --no-augment"
      " --dropout 0 --checkpoint-every 6 --progress none --seed 11";
  const auto one = testing::run_command(env + testing::tula_binary() + common + " --batch-size 32 --checkpoint-dir " +
                                            (temp.path() / "one").string(),
                                        300);
  ASSERT_EQ(one.exit_code, 0) << one.output;
  const auto two = testing::run_on_free_port(
      [&](const std::string& port) {
        return env + testing::tula_binary() + common + " --nproc 2 --backend " + (two_gpus ? "nccl" : "gloo") +
               " --master-port " + port + " --batch-size 16 --bucket-mb 0.05 --checkpoint-dir " +
               (temp.path() / "two").string();
      },
      300);
  ASSERT_EQ(two.exit_code, 0) << two.output;
  const auto w1 = testing::checkpoint_weights((temp.path() / "one").string(), "small_cnn", {1, 10, 28});
  const auto w2 = testing::checkpoint_weights((temp.path() / "two").string(), "small_cnn", {1, 10, 28});
  ASSERT_EQ(w1.size(), w2.size());
  ASSERT_FALSE(w1.empty());
  float largest = 0;
  for (size_t i = 0; i < w1.size(); ++i) {
    largest = std::max(largest, (w1[i] - w2[i]).abs().max().item<float>());
    // Looser than the CPU test's 1e-4: cuDNN picks its kernels by batch size,
    // so the two runs sum in different orders (and some kernels use atomics).
    EXPECT_TRUE(torch::allclose(w1[i], w2[i], 1e-3, 1e-5))
        << "tensor " << i << " max diff " << (w1[i] - w2[i]).abs().max().item<float>();
  }
  std::printf("largest weight difference after 6 steps: %g (%s)\n", largest, two_gpus ? "nccl" : "gloo");
}

}  // namespace
}  // namespace tula::train
