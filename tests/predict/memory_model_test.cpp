#include "predict/memory_model.hpp"

#include <gtest/gtest.h>

#include "predict/error.hpp"
#include "predict/synthetic_profile.hpp"

namespace tula::predict {
namespace {

TEST(Memory, RecoversStaticAndActivationMemory) {
  test::Truth t;
  const auto m = fit_memory(test::make_profile(t, 31).memory);
  EXPECT_NEAR(m.params["m_static"], t.m_static, 3 * m.params.se("m_static"));
  EXPECT_NEAR(m.params["m_act"], t.m_act, 3 * m.params.se("m_act"));
}

TEST(Memory, LargestBatchThatFitsRespectsTheUpperBound) {
  test::Truth t;
  const auto m = fit_memory(test::make_profile(t, 32).memory);
  const double device = 1e9;  // (1e9 - 3e8) / 6e6 = 116.7 samples at the mean
  const auto b = m.max_batch(device);
  EXPECT_GE(b, 100);
  EXPECT_LE(b, 116);
  EXPECT_LE(m.upper_bytes(static_cast<double>(b)), device);
  EXPECT_GT(m.upper_bytes(static_cast<double>(b + 1)), device);
  EXPECT_EQ(m.max_batch(1e8), 0);  // below the static memory: nothing fits
}

TEST(Memory, AccumulationSplitsABatchTooLargeToFit) {
  const auto s = split_for_memory(1000, 300, "dev");
  EXPECT_EQ(s.steps, 4);
  EXPECT_EQ(s.micro_batch, 250);
  EXPECT_LE(s.micro_batch, 300);
  EXPECT_GE(s.micro_batch * s.steps, 1000);
  const auto fits = split_for_memory(64, 300, "dev");
  EXPECT_EQ(fits.steps, 1);
  EXPECT_EQ(fits.micro_batch, 64);
  try {
    split_for_memory(64, 0, "a 1 GiB device");
    FAIL();
  } catch (const InfeasibleError& e) {
    EXPECT_NE(std::string(e.what()).find("not even a batch of 1 fits a 1 GiB device"), std::string::npos);
  }
}

TEST(Memory, MemoryFallingWithBatchIsAnError) {
  std::vector<MemorySample> s = {{1, 900000000}, {16, 600000000}, {64, 300000000}, {128, 100000000}};
  EXPECT_THROW(fit_memory(s), FitError);
  EXPECT_THROW(fit_memory({{1, 100}, {2, 200}}), FitError);  // too few
}

}  // namespace
}  // namespace tula::predict
