// Which worker layouts NCCL can carry: one rank per GPU. The check runs before
// any worker joins, so a layout it cannot carry fails with its reason.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "distributed/communicator_options.hpp"

namespace tula::distributed {
namespace {

CommunicatorOptions on_cuda(const std::string& backend) {
  CommunicatorOptions o;
  o.backend = backend;
  o.use_cuda = true;
  return o;
}

std::string refusal(const CommunicatorOptions& o, int workers, int gpus) {
  try {
    o.require_gpu_per_nccl_worker(workers, gpus);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(NcclLayout, OneWorkerPerGpuIsAccepted) {
  EXPECT_EQ(refusal(on_cuda("nccl"), 1, 1), "");
  EXPECT_EQ(refusal(on_cuda("nccl"), 2, 2), "");
  EXPECT_EQ(refusal(on_cuda("auto"), 4, 8), "");
}

TEST(NcclLayout, TwoWorkersOnOneGpuAreRefusedNamingGlooAsTheWayToShare) {
  const auto why = refusal(on_cuda("nccl"), 2, 1);
  EXPECT_NE(why.find("needs a GPU per worker"), std::string::npos) << why;
  EXPECT_NE(why.find("2 workers on this node, 1 GPU(s) visible"), std::string::npos) << why;
  EXPECT_NE(why.find("--backend gloo"), std::string::npos) << why;
  // auto means NCCL on CUDA, and says so.
  EXPECT_NE(refusal(on_cuda("auto"), 3, 2).find("--backend auto (NCCL on CUDA)"), std::string::npos);
}

TEST(NcclLayout, GlooSharesAGpuAndCpuWorkersNeedNone) {
  EXPECT_EQ(refusal(on_cuda("gloo"), 4, 1), "");
  CommunicatorOptions cpu;  // auto on CPU tensors is Gloo
  EXPECT_EQ(refusal(cpu, 4, 0), "");
}

}  // namespace
}  // namespace tula::distributed
