#include "data/loader.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "data/rng.hpp"

namespace tula::data {
namespace {

// Sample i is an 8x8 image of random-looking values derived from i, with
// label i; it can fail on one index and be made slow, to test the producer.
class IndexDataset : public Dataset {
 public:
  explicit IndexDataset(int64_t size, int64_t fail_at = -1, int sleep_ms = 0)
      : size_(size), fail_at_(fail_at), sleep_ms_(sleep_ms) {}
  std::string name() const override { return "index"; }
  int64_t size() const override { return size_; }
  SampleShape shape() const override { return {2, 8, 8}; }
  int64_t num_classes() const override { return size_; }
  Batch gather(const std::vector<int64_t>& indices) const override {
    gathers_.fetch_add(1);
    if (sleep_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms_));
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
  std::vector<double> channel_mean() const override { return {0.5, 0.5}; }
  std::vector<double> channel_std() const override { return {0.29, 0.29}; }
  int gathers() const { return gathers_.load(); }

 private:
  int64_t size_;
  int64_t fail_at_;
  int sleep_ms_;
  mutable std::atomic<int> gathers_{0};
};

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
  EXPECT_GE(loader.last_wait_seconds(), 0.0);
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
  std::vector<int64_t> indices(30);
  std::iota(indices.begin(), indices.end(), 0);
  PrefetchLoader loader(dataset, indices, loader_options(5, GetParam()));
  ASSERT_TRUE(loader.next().has_value());
  ASSERT_TRUE(loader.next().has_value());
  try {
    loader.next();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot read sample 12");
  }
}

INSTANTIATE_TEST_SUITE_P(Prefetch, LoaderPrefetchTest, ::testing::Values(0, 1, 2),
                         [](const auto& info) { return "Prefetch" + std::to_string(info.param); });

// Waits (up to a generous limit, the machine may be busy) until `dataset`
// has been gathered from `count` times, then a little longer to see if the
// producer goes beyond.
int settle(const IndexDataset& dataset, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (dataset.gathers() < count && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return dataset.gathers();
}

TEST(LoaderTest, PrefetchIsBounded) {
  auto dataset = std::make_shared<IndexDataset>(100);
  std::vector<int64_t> indices(100);
  std::iota(indices.begin(), indices.end(), 0);
  PrefetchLoader loader(dataset, indices, loader_options(10, 2));
  EXPECT_EQ(settle(*dataset, 2), 2);
  ASSERT_TRUE(loader.next().has_value());
  EXPECT_EQ(settle(*dataset, 3), 3);
}

TEST(LoaderTest, StopsPromptlyWhenTheConsumerQuitsEarly) {
  auto dataset = std::make_shared<IndexDataset>(1000, -1, /*sleep_ms=*/20);
  std::vector<int64_t> indices(1000);
  std::iota(indices.begin(), indices.end(), 0);
  const auto start = std::chrono::steady_clock::now();
  {
    PrefetchLoader loader(dataset, indices, loader_options(4, 3));
    ASSERT_TRUE(loader.next().has_value());
    EXPECT_GT(loader.last_wait_seconds(), 0.01);  // the first batch took 20 ms to gather
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 2.0);
  EXPECT_LT(dataset->gathers(), 20);
}

TEST(LoaderTest, RejectsBadOptions) {
  auto dataset = std::make_shared<IndexDataset>(10);
  std::vector<int64_t> indices(10);
  std::iota(indices.begin(), indices.end(), 0);
  EXPECT_THROW(PrefetchLoader(dataset, indices, loader_options(0, 2)), std::invalid_argument);
  EXPECT_THROW(PrefetchLoader(dataset, indices, loader_options(3, -1)), std::invalid_argument);
  EXPECT_THROW(PrefetchLoader(dataset, indices, loader_options(3, 2, 5)), std::invalid_argument);
  PrefetchLoader empty(dataset, {}, loader_options(3, 2));
  EXPECT_EQ(empty.num_batches(), 0);
  EXPECT_FALSE(empty.next().has_value());
}

}  // namespace
}  // namespace tula::data
