// The bucketed reducer against the plain full-batch gradient, with two workers
// as two threads of this process joined over loopback TCP (real Gloo).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <functional>
#include <memory>
#include <future>
#include <mutex>
#include <string>
#include <utility>

#include "distributed/communicator.hpp"
#include "distributed/reducer.hpp"
#include "helpers/expect_error.hpp"
#include "helpers/free_port.hpp"
#include "helpers/listening_socket.hpp"
#include "helpers/wait.hpp"

namespace tula::distributed {
namespace {

using namespace std::chrono_literals;
using tula::testing::says_port_in_use;

// Three layers plus one parameter the forward never uses. A parameter of the
// module itself, it comes first in parameters(), so it lands in the last
// bucket: that bucket can launch only in finish_backward().
struct TinyNet : torch::nn::Module {
  TinyNet() {
    conv = register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)));
    fc1 = register_module("fc1", torch::nn::Linear(4 * 6 * 6, 32));
    fc2 = register_module("fc2", torch::nn::Linear(32, 5));
    unused = register_parameter("unused", torch::ones({7}));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(conv(x)).flatten(1);
    return fc2(torch::relu(fc1(x)));
  }
  torch::nn::Conv2d conv{nullptr};
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
  torch::Tensor unused;
};

std::vector<torch::Tensor> full_batch_grads(const torch::Tensor& x, const torch::Tensor& y) {
  torch::manual_seed(7);
  TinyNet net;
  torch::nn::functional::cross_entropy(net.forward(x), y).backward();
  std::vector<torch::Tensor> grads;
  for (auto& p : net.parameters()) grads.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  return grads;
}

struct WorkerResult {
  std::vector<torch::Tensor> grads;
  ReduceStats stats;
  int64_t buckets = 0;
};

WorkerResult worker(int rank, int port, torch::Tensor x, torch::Tensor y, int64_t bucket_bytes, int accumulation) {
  RendezvousInfo info;
  info.rank = rank;
  info.world_size = 2;
  info.master_port = port;
  CommunicatorOptions copts;
  copts.rendezvous_timeout = std::chrono::seconds(30);
  auto comm = Communicator::connect(info, copts);
  // The global generator is shared by both worker threads.
  static std::mutex init_mutex;
  std::unique_lock<std::mutex> lock(init_mutex);
  torch::manual_seed(7);
  TinyNet net;
  lock.unlock();
  ReducerOptions ropts;
  ropts.bucket_bytes = bucket_bytes;
  ropts.first_bucket_bytes = bucket_bytes;
  GradientReducer reducer(net.parameters(), comm.get(), ropts);
  WorkerResult result;
  result.buckets = reducer.num_buckets();
  // Two iterations: the second proves the reducer resets between steps.
  for (int iter = 0; iter < 2; ++iter) {
    reducer.zero_grad();
    auto xs = x.chunk(accumulation), ys = y.chunk(accumulation);
    for (int m = 0; m < accumulation; ++m) {
      reducer.begin_backward(m == accumulation - 1);
      (torch::nn::functional::cross_entropy(net.forward(xs[m]), ys[m]) / accumulation).backward();
      if (m == accumulation - 1) result.stats = reducer.finish_backward();
    }
  }
  for (auto& p : net.parameters()) result.grads.push_back(p.grad().clone());
  return result;
}

// Runs worker(0, port) and worker(1, port) on two threads. Rank 1 starts only
// once rank 0's server is seen listening in this process, so it never meets
// a server that took the port first; rank 0 finding the port taken tries a
// fresh one.
std::pair<WorkerResult, WorkerResult> run_two_workers(const std::function<WorkerResult(int, int)>& worker) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = tula::testing::free_port();
    auto rank0 = std::async(std::launch::async, worker, 0, port);
    const auto finished = [&] { return rank0.wait_for(0s) == std::future_status::ready; };
    const auto settled = tula::testing::eventually(
        [&] { return finished() || tula::testing::this_process_listens_on(port); },
        "rank 0 to listen on port " + std::to_string(port) + " (or fail)");
    if (!settled) {
      ADD_FAILURE() << settled.message();
      return {};
    }
    if (finished()) {
      try {
        rank0.get();
        ADD_FAILURE() << "rank 0 finished its rendezvous alone";
        return {};
      } catch (const std::runtime_error& e) {
        if (says_port_in_use(e.what())) continue;
        throw;
      }
    }
    auto rank1 = std::async(std::launch::async, worker, 1, port);
    auto result0 = rank0.get();
    return {std::move(result0), rank1.get()};
  }
  ADD_FAILURE() << "each of 5 free ports was taken by someone else before rank 0 bound it";
  return {};
}

// Two workers on 8 samples each against one process on all 16, and the
// statistics of rank 0's last step.
ReduceStats expect_ddp_matches_full_batch(int64_t bucket_bytes, int accumulation, int64_t min_buckets) {
  torch::manual_seed(3);
  auto x = torch::randn({16, 1, 6, 6});
  auto y = torch::randint(0, 5, {16});
  const auto expected = full_batch_grads(x, y);
  // Rank r takes the samples r, r+2, ... as the distributed sampler would.
  const auto [r0, r1] = run_two_workers([&](int rank, int port) {
    const auto mine = torch::arange(rank, 16, 2);
    return worker(rank, port, x.index_select(0, mine), y.index_select(0, mine), bucket_bytes, accumulation);
  });
  EXPECT_GE(r0.buckets, min_buckets);
  EXPECT_EQ(r0.grads.size(), expected.size());
  if (r0.grads.size() != expected.size() || r1.grads.size() != expected.size()) return r0.stats;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(torch::allclose(r0.grads[i], expected[i], 1e-4, 1e-6)) << "parameter " << i;
    EXPECT_TRUE(torch::equal(r0.grads[i], r1.grads[i])) << "workers disagree on parameter " << i;
  }
  // Statistics: the global norm is that of the full-batch gradient; the mean
  // local norm is larger (noisier, smaller batches).
  double full_sq = 0;
  for (auto& g : expected) full_sq += g.pow(2).sum().item<double>();
  EXPECT_NEAR(r0.stats.global_grad_sq, full_sq, 1e-4 * full_sq);
  EXPECT_GT(r0.stats.local_grad_sq, r0.stats.global_grad_sq);
  EXPECT_DOUBLE_EQ(r0.stats.local_grad_sq, r1.stats.local_grad_sq);
  EXPECT_GT(r0.stats.comm_busy_seconds, 0.0);
  return r0.stats;
}

// One bucket holds every parameter, the unused one too, so its allreduce
// starts only in finish_backward(): nothing is hidden behind backward, and
// all of the communication lies within the exposed time.
TEST(GradientReducer, TwoWorkersOneBucketMatchFullBatch) {
  const ReduceStats stats = expect_ddp_matches_full_batch(25 << 20, 1, 1);
  EXPECT_EQ(stats.hidden_fraction, 0.0);
  EXPECT_LE(stats.comm_busy_seconds, stats.exposed_comm_seconds + 1e-9);
}

// The first bucket (fc2's gradients, and fc1's with larger buckets) is
// complete while backward still works on the layers below: its allreduce
// starts then, and counts as hidden.
TEST(GradientReducer, TwoWorkersManyBucketsMatchFullBatch) {
  EXPECT_GT(expect_ddp_matches_full_batch(256, 1, 3).hidden_fraction, 0.0);
}

TEST(GradientReducer, AccumulationMatchesFullBatch) {
  EXPECT_GT(expect_ddp_matches_full_batch(1024, 2, 2).hidden_fraction, 0.0);
}

TEST(GradientReducer, BucketsFollowReverseParameterOrder) {
  TinyNet net;
  ReducerOptions opts;
  opts.bucket_bytes = 1;
  opts.first_bucket_bytes = 1;
  GradientReducer reducer(net.parameters(), nullptr, opts);
  auto layout = reducer.bucket_layout();
  ASSERT_EQ(layout.size(), net.parameters().size());
  EXPECT_EQ(layout.front().front(), static_cast<int64_t>(net.parameters().size()) - 1);
  EXPECT_EQ(layout.back().front(), 0);
}

// Each bucket's launch, timed from begin_backward(): in launch order, so the
// times rise; the parameter forward never used keeps the last bucket waiting
// until finish_backward().
TEST(GradientReducer, RecordsWhenEachBucketWasReady) {
  TinyNet net;
  ReducerOptions opts;
  opts.bucket_bytes = 1;
  opts.first_bucket_bytes = 1;
  GradientReducer reducer(net.parameters(), nullptr, opts);
  reducer.zero_grad();
  const auto begin = std::chrono::steady_clock::now();
  reducer.begin_backward(true);
  torch::nn::functional::cross_entropy(net.forward(torch::randn({4, 1, 6, 6})), torch::randint(0, 5, {4})).backward();
  const double backward_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  const auto stats = reducer.finish_backward();
  ASSERT_EQ(static_cast<int64_t>(stats.bucket_ready_seconds.size()), reducer.num_buckets());
  EXPECT_GE(stats.bucket_ready_seconds.front(), 0.0);
  for (size_t k = 1; k < stats.bucket_ready_seconds.size(); ++k) {
    EXPECT_GE(stats.bucket_ready_seconds[k], stats.bucket_ready_seconds[k - 1]) << "bucket " << k;
  }
  EXPECT_LE(stats.bucket_ready_seconds[stats.bucket_ready_seconds.size() - 2], backward_s);
  EXPECT_GE(stats.bucket_ready_seconds.back(), backward_s);
}

TEST(GradientReducer, SingleWorkerComputesStatistics) {
  TinyNet net;
  GradientReducer reducer(net.parameters(), nullptr);
  reducer.zero_grad();
  reducer.begin_backward(true);
  torch::nn::functional::cross_entropy(net.forward(torch::randn({4, 1, 6, 6})), torch::randint(0, 5, {4})).backward();
  auto stats = reducer.finish_backward();
  EXPECT_GT(stats.global_grad_sq, 0.0);
  EXPECT_NEAR(stats.local_grad_sq, stats.global_grad_sq, 1e-6 * stats.global_grad_sq);
}

// The per-tensor norms, in parameter order, on the host (the CPU) and on the
// gradients' device alike, each the norm of that parameter's gradient.
TEST(GradientReducer, PerTensorNormsAreTheGradientsOnHostAndDevice) {
  TinyNet net;
  ReducerOptions opts;
  opts.bucket_bytes = 1;  // one bucket per tensor: the order is the buckets', reversed
  opts.first_bucket_bytes = 1;
  GradientReducer reducer(net.parameters(), nullptr, opts);
  reducer.zero_grad();
  reducer.begin_backward(true);
  torch::nn::functional::cross_entropy(net.forward(torch::randn({4, 1, 6, 6})), torch::randint(0, 5, {4})).backward();
  auto stats = reducer.finish_backward();
  const auto params = net.parameters();
  ASSERT_EQ(stats.global_grad_sq_per_tensor.size(), params.size());
  ASSERT_TRUE(stats.global_grad_sq_device.defined());
  ASSERT_EQ(stats.global_grad_sq_device.numel(), static_cast<int64_t>(params.size()));
  double total = 0.0;
  for (size_t i = 0; i < params.size(); ++i) {
    const double expected = params[i].grad().pow(2).sum().item<double>();
    EXPECT_NEAR(stats.global_grad_sq_per_tensor[i], expected, 1e-6 * expected + 1e-12) << "tensor " << i;
    EXPECT_DOUBLE_EQ(stats.global_grad_sq_device[static_cast<int64_t>(i)].item<double>(),
                     stats.global_grad_sq_per_tensor[i]);
    EXPECT_DOUBLE_EQ(stats.local_grad_sq_per_tensor[i], stats.global_grad_sq_per_tensor[i]);  // one worker
    total += expected;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].numel() == 7) {
      EXPECT_EQ(stats.global_grad_sq_per_tensor[i], 0.0) << "the unused parameter";
    }
  }
  EXPECT_NEAR(stats.global_grad_sq, total, 1e-6 * total);
}

TEST(Communicator, PortInUseIsReported) {
  const tula::testing::ListeningSocket someone_else;
  RendezvousInfo info;
  info.world_size = 2;
  info.master_port = someone_else.port();
  CommunicatorOptions opts;
  opts.rendezvous_timeout = 2s;
  opts.collective_timeout = 2s;
  tula::testing::expect_error([&] { Communicator::connect(info, opts); }, {"in use"});
}

TEST(Communicator, AWorkerThatComesBeforeRankZeroJoinsOnceItsStoreOpens) {
  CommunicatorOptions opts;
  opts.rendezvous_timeout = 60s;
  opts.collective_timeout = 60s;
  ASSERT_TRUE(tula::testing::with_free_port([&](int port) {
    RendezvousInfo info;
    info.world_size = 2;
    info.master_port = port;
    RendezvousInfo second = info;
    second.rank = 1;
    auto early = std::async(std::launch::async, [&] {
      auto comm = Communicator::connect(second, opts);
      return comm->sum({2.0}).front();
    });
    std::unique_ptr<Communicator> first;
    try {
      first = Communicator::connect(info, opts);
    } catch (const std::runtime_error& e) {
      if (!says_port_in_use(e.what())) throw;
      return false;  // someone else's port: rank 1 meets their listener and times out
    }
    EXPECT_EQ(first->sum({1.0}).front(), 3.0);
    EXPECT_EQ(early.get(), 3.0);
    return true;
  }));
}

TEST(Communicator, RendezvousThatNeverCompletesTimesOut) {
  RendezvousInfo info;
  info.world_size = 2;
  CommunicatorOptions opts;
  opts.rendezvous_timeout = 2s;
  std::string error;
  std::chrono::steady_clock::duration took{};
  ASSERT_TRUE(tula::testing::with_free_port([&](int port) {
    info.master_port = port;
    const auto start = std::chrono::steady_clock::now();
    try {
      Communicator::connect(info, opts);
      error = "(no error)";
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    took = std::chrono::steady_clock::now() - start;
    return !says_port_in_use(error);
  }));
  EXPECT_NE(error.find("not all workers joined"), std::string::npos) << error;
  EXPECT_LT(took, tula::testing::kPatience) << "connect() waited on for the missing worker long after its 2 s timeout";
}

}  // namespace
}  // namespace tula::distributed
