// The decoding threads: every item once, errors reported by the lowest
// failing item, and callers on several threads at once served.
#include "data/decode_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tula::data {
namespace {

TEST(DecodePool, RunsEveryItemExactlyOnce) {
  DecodePool pool(3, false);
  EXPECT_EQ(pool.threads(), 3);
  std::vector<std::atomic<int>> runs(500);
  pool.for_each(500, [&](int64_t i) { runs[static_cast<size_t>(i)].fetch_add(1); });
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "item " << i;
  pool.for_each(0, [](int64_t) { FAIL() << "no item to run"; });
}

TEST(DecodePool, RethrowsTheLowestFailingItemsErrorAfterRunningTheRest) {
  DecodePool pool(4, false);
  std::atomic<int> ran{0};
  try {
    pool.for_each(100, [&](int64_t i) {
      ran.fetch_add(1);
      if (i == 70 || i == 30 || i == 90) throw std::runtime_error("item " + std::to_string(i));
    });
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "item 30");
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST(DecodePool, ServesSeveralCallersAtOnce) {
  DecodePool pool(2, false);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round) pool.for_each(25, [&](int64_t i) { total.fetch_add(i); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 20 * (24 * 25 / 2));
}

TEST(DecodePool, OneThreadIsTheCallerAlone) {
  DecodePool pool(1, false);
  const auto caller = std::this_thread::get_id();
  pool.for_each(10, [&](int64_t) { EXPECT_EQ(std::this_thread::get_id(), caller); });
  EXPECT_THROW(DecodePool(0, false), std::invalid_argument);
}

}  // namespace
}  // namespace tula::data
