// A helper thread that asks for its ops on itself alone keeps them there
// after LibTorch's first parallel op on that thread, which sets the thread's
// team size to the process's intra-op count unless it already ran.
#include "kernels/thread_limits.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

namespace tula::kernels {
namespace {

TEST(ThreadLimits, AHelperThreadStaysAtOneThreadAfterItsFirstParallelOp) {
  const int before = at::get_num_threads();
  at::set_num_threads(2);  // the training thread's count, as `tula train` sets it
  int during = 0, after = 0;
  std::thread helper([&] {
    run_ops_on_this_thread_only();
    during = at::get_num_threads();
    // Large enough that ATen would split it across its team.
    auto x = torch::ones({1 << 20}, torch::kUInt8).to(torch::kFloat32).mul_(0.5);
    after = at::get_num_threads();
    EXPECT_EQ(x.sum().item<double>(), 0.5 * (1 << 20));
  });
  helper.join();
  EXPECT_EQ(during, 1);
  EXPECT_EQ(after, 1) << "the helper's first parallel op put its team back to the process's count";
  EXPECT_EQ(at::get_num_threads(), 2) << "the calling thread's count is its own";
  at::set_num_threads(before);
}

}  // namespace
}  // namespace tula::kernels
