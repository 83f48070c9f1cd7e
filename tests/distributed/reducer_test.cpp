// The bucketed reducer against the plain full-batch gradient, with two workers
// as two threads of this process joined over loopback TCP (real Gloo).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <future>
#include <mutex>
#include <thread>

#include "helpers/free_port.hpp"
#include "distributed/communicator.hpp"
#include "distributed/reducer.hpp"

namespace tula::distributed {
namespace {

// Three layers plus one parameter the forward never uses.
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

void expect_ddp_matches_full_batch(int64_t bucket_bytes, int accumulation, int64_t min_buckets) {
  torch::manual_seed(3);
  auto x = torch::randn({16, 1, 6, 6});
  auto y = torch::randint(0, 5, {16});
  const auto expected = full_batch_grads(x, y);
  const int port = testing::free_port();
  // Rank r takes the samples r, r+2, ... as the distributed sampler would.
  auto idx0 = torch::arange(0, 16, 2), idx1 = torch::arange(1, 16, 2);
  auto f0 = std::async(std::launch::async, worker, 0, port, x.index_select(0, idx0), y.index_select(0, idx0),
                       bucket_bytes, accumulation);
  auto f1 = std::async(std::launch::async, worker, 1, port, x.index_select(0, idx1), y.index_select(0, idx1),
                       bucket_bytes, accumulation);
  auto r0 = f0.get();
  auto r1 = f1.get();
  EXPECT_GE(r0.buckets, min_buckets);
  ASSERT_EQ(r0.grads.size(), expected.size());
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
  EXPECT_GE(r0.stats.hidden_fraction, 0.0);
  EXPECT_LE(r0.stats.hidden_fraction, 1.0);
}

TEST(GradientReducer, TwoWorkersOneBucketMatchFullBatch) { expect_ddp_matches_full_batch(25 << 20, 1, 1); }

TEST(GradientReducer, TwoWorkersManyBucketsMatchFullBatch) { expect_ddp_matches_full_batch(256, 1, 3); }

TEST(GradientReducer, AccumulationMatchesFullBatch) { expect_ddp_matches_full_batch(1024, 2, 2); }

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

TEST(Communicator, PortInUseIsReported) {
  const int port = testing::free_port();
  RendezvousInfo info;
  info.world_size = 2;
  info.master_port = port;
  CommunicatorOptions opts;
  opts.rendezvous_timeout = std::chrono::seconds(2);
  opts.collective_timeout = std::chrono::seconds(2);
  // Rank 0 of a first job holds the port while waiting for its peer.
  auto holder = std::async(std::launch::async, [&] {
    try {
      Communicator::connect(info, opts);
    } catch (...) {
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  try {
    Communicator::connect(info, opts);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  holder.get();
}

TEST(Communicator, RendezvousThatNeverCompletesTimesOut) {
  RendezvousInfo info;
  info.world_size = 2;
  info.master_port = testing::free_port();
  CommunicatorOptions opts;
  opts.rendezvous_timeout = std::chrono::seconds(2);
  const auto start = std::chrono::steady_clock::now();
  try {
    Communicator::connect(info, opts);
    FAIL() << "expected a timeout";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not all workers joined"), std::string::npos) << e.what();
  }
  // Bounded: the 2 s timeout, not forever.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

}  // namespace
}  // namespace tula::distributed
