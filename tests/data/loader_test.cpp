#include "data/loader.hpp"

#include <gtest/gtest.h>
#include <sys/types.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "data/rng.hpp"
#include "helpers/expect_error.hpp"
#include "helpers/proc_state.hpp"
#include "helpers/wait.hpp"

namespace tula::data {
namespace {

using tula::testing::current_thread_id;
using tula::testing::eventually;
using tula::testing::thread_state;

// Sample i is an 8x8 image of random-looking values derived from i, with
// label i; it can fail on one index. To test the producer thread, it counts
// its gathers, remembers the thread that gathered last, and can hold every
// gather at a gate until the test opens it.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t size, int64_t fail_at = -1) : size_(size), fail_at_(fail_at) {}
  std::string name() const override { return "index"; }
  int64_t size() const override { return size_; }
  SampleShape shape() const override { return {2, 8, 8}; }
  int64_t num_classes() const override { return size_; }
  Batch gather(const std::vector<int64_t>& indices) const override {
    gatherer_.store(current_thread_id());
    gathers_.fetch_add(1);
    wait_for_open_gate();
    Batch batch;
    batch.labels = torch::tensor(at::ArrayRef<int64_t>(indices), torch::kInt64);
    for (const int64_t i : indices) {
      if (i == fail_at_) throw std::runtime_error("cannot read sample " + std::to_string(i));
    }
    const auto pixel = torch::arange(128, torch::kFloat32).reshape({1, 2, 8, 8});
    batch.images = torch::frac((batch.labels.to(torch::kFloat32).view({-1, 1, 1, 1}) + 1) * 0.618f +
                               pixel * 0.137f);
    return batch;
  }
  Batch gather_bytes(const std::vector<int64_t>& indices, uint64_t /*seed*/) const override {
    Batch batch = gather(indices);
    batch.images = batch.images.mul(255).round().to(torch::kUInt8);
    return batch;
  }
  std::vector<double> channel_mean() const override { return {0.5, 0.5}; }
  std::vector<double> channel_std() const override { return {0.29, 0.29}; }

  int gathers() const { return gathers_.load(); }
  pid_t gatherer() const { return gatherer_.load(); }
  void close_gate() {
    const std::lock_guard lock(gate_mutex_);
    gate_open_ = false;
  }
  void open_gate() {
    {
      const std::lock_guard lock(gate_mutex_);
      gate_open_ = true;
    }
    gate_.notify_all();
  }

 private:
  void wait_for_open_gate() const {
    std::unique_lock lock(gate_mutex_);
    gate_.wait(lock, [&] { return gate_open_; });
  }

  int64_t size_;
  int64_t fail_at_;
  mutable std::atomic<int> gathers_{0};
  mutable std::atomic<pid_t> gatherer_{0};
  mutable std::mutex gate_mutex_;
  mutable std::condition_variable gate_;
  bool gate_open_ = true;
};

std::vector<int64_t> in_order(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<int64_t> shuffled(int64_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  std::reverse(v.begin(), v.end());
  std::rotate(v.begin(), v.begin() + n / 3, v.end());
  return v;
}

LoaderOptions loader_options(int64_t batch_size, int64_t prefetch, int64_t start_batch = 0) {
  LoaderOptions o;
  o.batch_size = batch_size;
  o.prefetch = prefetch;
  o.start_batch = start_batch;
  o.seed = 99;
  o.transform.train = true;
  o.transform.crop_padding = 1;
  o.transform.horizontal_flip = true;
  o.transform.mean = {0.5};
  o.transform.std = {0.29};
  return o;
}

std::vector<Batch> drain(PrefetchLoader& loader) {
  std::vector<Batch> batches;
  while (auto batch = loader.next()) batches.push_back(std::move(*batch));
  return batches;
}

class LoaderPrefetchTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(LoaderPrefetchTest, ReturnsAllSamplesInOrder) {
  auto dataset = std::make_shared<IndexDataset>(23);
  const auto indices = shuffled(23);
  PrefetchLoader loader(dataset, indices, loader_options(5, GetParam()));
  EXPECT_EQ(loader.num_batches(), 5);
  const auto batches = drain(loader);
  ASSERT_EQ(batches.size(), 5u);
  std::vector<int64_t> seen;
  for (const auto& batch : batches) {
    EXPECT_EQ(batch.images.size(0), batch.labels.size(0));
    EXPECT_EQ(batch.images.sizes().slice(1), (std::vector<int64_t>{2, 8, 8}));
    for (int64_t k = 0; k < batch.labels.size(0); ++k)
      seen.push_back(batch.labels[k].item<int64_t>());
  }
  EXPECT_EQ(batches.back().labels.size(0), 3);  // the last batch is partial
  EXPECT_EQ(seen, indices);
  EXPECT_FALSE(loader.next().has_value());
}

TEST_P(LoaderPrefetchTest, StartBatchRepeatsTheFullRunsTail) {
  auto dataset = std::make_shared<IndexDataset>(40);
  const auto indices = shuffled(40);
  PrefetchLoader full(dataset, indices, loader_options(6, GetParam()));
  const auto all = drain(full);
  PrefetchLoader resumed(dataset, indices, loader_options(6, GetParam(), 3));
  EXPECT_EQ(resumed.num_batches(), 7);
  const auto tail = drain(resumed);
  ASSERT_EQ(tail.size(), 4u);
  for (size_t k = 0; k < tail.size(); ++k) {
    EXPECT_TRUE(tail[k].images.equal(all[k + 3].images)) << "batch " << k + 3;
    EXPECT_TRUE(tail[k].labels.equal(all[k + 3].labels)) << "batch " << k + 3;
  }
  // Batch i is augmented with seed mix(seed, i), as loader.hpp promises.
  for (const int64_t i : {0, 4}) {
    const std::vector<int64_t> chosen(indices.begin() + 6 * i, indices.begin() + 6 * (i + 1));
    const Batch expected = apply_transform(dataset->gather(chosen), loader_options(6, 0).transform,
                                           mix(99, static_cast<uint64_t>(i)));
    EXPECT_TRUE(all[i].images.equal(expected.images)) << "batch " << i;
  }
  EXPECT_FALSE(all[0].images.equal(all[1].images));

  PrefetchLoader at_end(dataset, indices, loader_options(6, GetParam(), 7));
  EXPECT_FALSE(at_end.next().has_value());
}

TEST_P(LoaderPrefetchTest, ProducerErrorsReachTheConsumerInOrder) {
  auto dataset = std::make_shared<IndexDataset>(30, /*fail_at=*/12);
  PrefetchLoader loader(dataset, in_order(30), loader_options(5, GetParam()));
  ASSERT_TRUE(loader.next().has_value());
  ASSERT_TRUE(loader.next().has_value());
  EXPECT_EQ(tula::testing::error_message<std::runtime_error>([&] { loader.next(); }), "cannot read sample 12");
}

// The first gather is held at the gate until the consumer is seen asleep
// inside next(), and 50 ms longer: next() waited at least from that sighting
// to the gate's opening, and no longer than the call lasted. (The 50 ms only
// make the lower bound large enough that a wait reported as zero or in the
// wrong unit cannot pass; nothing relies on the other thread within them.)
TEST_P(LoaderPrefetchTest, ReportsHowLongNextWaitedForItsBatch) {
  using Clock = std::chrono::steady_clock;
  auto dataset = std::make_shared<IndexDataset>(10);
  dataset->close_gate();
  PrefetchLoader loader(dataset, in_order(10), loader_options(5, GetParam()));
  std::atomic<pid_t> consumer{0};
  bool got_batch = false;
  double call_seconds = 0;
  std::thread consume([&] {
    consumer.store(current_thread_id());
    const auto start = Clock::now();
    got_batch = loader.next().has_value();
    call_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  });
  const auto blocked = eventually(
      [&] { return consumer.load() != 0 && thread_state(consumer.load()) == 'S'; },
      "the consumer to block in next() while the first batch cannot be gathered");
  const auto blocked_at = Clock::now();
  if (blocked) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double held_seconds = std::chrono::duration<double>(Clock::now() - blocked_at).count();
  dataset->open_gate();
  consume.join();
  ASSERT_TRUE(blocked);
  ASSERT_TRUE(got_batch);
  EXPECT_GE(loader.last_wait_seconds(), held_seconds);
  EXPECT_LE(loader.last_wait_seconds(), call_seconds);
}

INSTANTIATE_TEST_SUITE_P(Prefetch, LoaderPrefetchTest, ::testing::Values(0, 1, 2),
                         [](const auto& info) { return "Prefetch" + std::to_string(info.param); });

// The producer runs ahead by `prefetch` batches, then sleeps until the
// consumer takes one. A producer seen asleep has gone as far as it will.
TEST(LoaderTest, PrefetchIsBounded) {
  auto dataset = std::make_shared<IndexDataset>(100);
  PrefetchLoader loader(dataset, in_order(100), loader_options(10, 2));
  const auto producer_asleep_after = [&](int gathers) {
    return eventually(
        [&] { return dataset->gathers() >= gathers && thread_state(dataset->gatherer()) == 'S'; },
        "the producer to gather " + std::to_string(gathers) + " batches and go to sleep");
  };
  ASSERT_TRUE(producer_asleep_after(2));
  EXPECT_EQ(dataset->gathers(), 2);
  ASSERT_TRUE(loader.next().has_value());
  ASSERT_TRUE(producer_asleep_after(3));
  EXPECT_EQ(dataset->gathers(), 3);
}

// A consumer that stops after one batch of 250 leaves the producer no room to
// gather more than that batch and the read-ahead, and the loader's destructor
// stops it there rather than letting it finish the epoch.
TEST(LoaderTest, StopsWhenTheConsumerQuitsEarly) {
  auto dataset = std::make_shared<IndexDataset>(1000);
  {
    PrefetchLoader loader(dataset, in_order(1000), loader_options(4, 3));
    ASSERT_TRUE(loader.next().has_value());
  }
  EXPECT_LE(dataset->gathers(), 1 + 3);
}

TEST(LoaderTest, RejectsBadOptions) {
  auto dataset = std::make_shared<IndexDataset>(10);
  const auto indices = in_order(10);
  EXPECT_THROW(PrefetchLoader(dataset, indices, loader_options(0, 2)), std::invalid_argument);
  EXPECT_THROW(PrefetchLoader(dataset, indices, loader_options(3, -1)), std::invalid_argument);
  EXPECT_THROW(PrefetchLoader(dataset, indices, loader_options(3, 2, 5)), std::invalid_argument);
  PrefetchLoader empty(dataset, {}, loader_options(3, 2));
  EXPECT_EQ(empty.num_batches(), 0);
  EXPECT_FALSE(empty.next().has_value());
}

}  // namespace
}  // namespace tula::data
