// NCCL as this machine allows it: one rank on its GPU runs the collectives the
// engine uses; two ranks on one GPU (which NCCL refuses inside its set-up) are
// turned away before they start, with the reason and the way to share a GPU.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "distributed/communicator.hpp"
#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"

namespace tula::distributed {
namespace {

TEST(Nccl, OneRankAllreducesBroadcastsAndSumsOnItsGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible (or a LibTorch without CUDA)";
  CommunicatorOptions options;
  options.backend = "nccl";
  options.use_cuda = true;
  options.rendezvous_timeout = std::chrono::seconds(60);
  options.collective_timeout = std::chrono::seconds(60);
  EXPECT_TRUE(testing::with_free_port([&](int port) {
    RendezvousInfo info;
    info.master_port = port;
    std::unique_ptr<Communicator> comm;
    try {
      comm = Communicator::connect(info, options);
    } catch (const std::runtime_error& e) {
      if (testing::says_port_in_use(e.what())) return false;
      throw;
    }
    EXPECT_EQ(comm->backend(), "nccl");
    EXPECT_TRUE(comm->device().is_cuda());
    auto t = torch::arange(4, torch::TensorOptions(torch::kFloat).device(comm->device()));
    comm->allreduce(t);
    comm->broadcast(t, 0);
    comm->barrier();
    EXPECT_TRUE(torch::equal(t.cpu(), torch::arange(4, torch::kFloat))) << t;
    EXPECT_EQ(comm->sum({1.5, -2.0}), (std::vector<double>{1.5, -2.0}));
    return true;
  }));
}

TEST(Nccl, TwoWorkersOnOneGpuAreTurnedAwayWithTheReason) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device visible (or a LibTorch without CUDA)";
  if (torch::cuda::device_count() >= 2) GTEST_SKIP() << "two GPUs visible: NCCL gets one per worker here";
  testing::expect_tula_fails("train --nproc 2 --device cuda --backend nccl --model small_cnn --dataset synthetic"
                             " --synthetic-shape 1x28x28 --synthetic-size 64 --batch-size 16 --max-steps 1"
                             " --no-eval --progress none --master-port " + std::to_string(testing::free_port()),
                             "needs a GPU per worker: 2 workers on this node, 1 GPU(s) visible; use --backend gloo",
                             120);
}

}  // namespace
}  // namespace tula::distributed
