// The profile's device: --device cpu through the same code a GPU profile
// takes (the device it names, recorded in the profile), the refusal of a
// device this build or machine has not, and the search for the largest
// batch that fits below an out-of-memory point.
#include "profile/device.hpp"

#include <gtest/gtest.h>

#include <set>

#include "helpers/expect_error.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "predict/profile.hpp"
#include "profile/compute_trials.hpp"
#include "profile/profiler.hpp"

namespace tula::profile {
namespace {

using testing::run_command;
using testing::tula_binary;

TEST(ProfileDevice, CpuIsTheCpuAndAutoFallsBackToItWithoutAGpu) {
  EXPECT_TRUE(profile_device("cpu").is_cpu());
  const auto h = describe_hardware(profile_device("cpu"));
  EXPECT_EQ(h.device.kind, "cpu");
  EXPECT_EQ(h.device.count, 1);
  EXPECT_GT(h.device.memory_bytes, 0);
  EXPECT_EQ(step_memory_budget(profile_device("cpu"), h), h.device.memory_bytes / 2) << "half the host, as before";
  tula::testing::expect_error<std::invalid_argument>([] { profile_device("tpu"); }, {"--device", "'tpu'", "cpu, cuda or auto"});
  if (!profile_device("auto").is_cuda()) {
    // No GPU here (or no CUDA in this build): cuda is refused, saying which.
    const auto why = tula::testing::error_message<std::invalid_argument>([] { profile_device("cuda"); });
    EXPECT_NE(why.find("--device cuda:"), std::string::npos) << why;
  }
}

TEST(ProfileDevice, TheLargestFittingBatchIsFoundByBisection) {
  // The device fits up to 700 samples; the grid fitted 512 and failed at 1024.
  std::set<int64_t> tried;
  const auto fits = [&](int64_t b) {
    tried.insert(b);
    return b <= 700;
  };
  const int64_t found = largest_fitting_batch(512, 1024, fits, 0.05);
  EXPECT_LE(found, 700);
  EXPECT_GE(found, 700 - 0.05 * 700) << "within the resolution of the real point";
  EXPECT_LE(tried.size(), 4u) << "a bisection, not a scan";
  EXPECT_EQ(largest_fitting_batch(3, 4, fits, 0.05), 3) << "nothing between them to try";
  EXPECT_EQ(largest_fitting_batch(1, 1000, [](int64_t b) { return b <= 1; }, 0.0), 1);
  EXPECT_THROW(largest_fitting_batch(8, 8, fits, 0.05), std::invalid_argument);
}

// A quick LeNet-5 profile on the CPU with `flags`, written to `path`. On a
// loaded machine the timings may contradict each other: the profile then
// refuses to fit, but has written its samples, which is what these tests
// read; any other failure fails the test.
void write_quick_cpu_profile(const std::string& flags, const std::string& path) {
  const auto r = run_command(tula_binary() + " profile --device cpu " + flags +
                                 " --model lenet5 --input-shape 1x28x28 --classes 10 --train-samples 2000 "
                                 "--test-samples 400 --workers 2 --quick --batch-sizes 4,8,16 --out " + path,
                             300);
  const bool written_unfitted =
      r.exit_code != 0 && r.output.find("do not support a fit (the raw samples are in " + path) != std::string::npos;
  ASSERT_TRUE(r.exit_code == 0 || written_unfitted) << r.output;
}

// `tula profile --device cpu`: the path a GPU profile takes, on the CPU,
// with the device recorded in the profile and in its measurement section.
TEST(ProfileDevice, ACpuProfileRecordsItsDevice) {
  const tula::testing::TempDir dir("tula-profile-device");
  const auto path = dir.file("p.json");
  write_quick_cpu_profile("", path);
  if (HasFatalFailure()) return;
  const auto p = predict::load_profile(path);
  EXPECT_EQ(p.hardware.device.kind, "cpu");
  EXPECT_EQ(p.hardware.device.count, 1);
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["measurement"]["device"], "cpu");
  EXPECT_EQ(j["hardware"]["device"]["count"], 1);

  EXPECT_EQ(p.precision, "fp32");
  EXPECT_EQ(j["measurement"]["precision"], "fp32");

  auto r = run_command(tula_binary() + " profile --device bogus --model lenet5 --input-shape 1x28x28 --out " + path, 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--device: 'bogus' is not a device (cpu, cuda or auto)"), std::string::npos) << r.output;
}

// `tula profile --precision bf16`: the steps timed under bf16 autocast, as
// `tula train --precision bf16` runs them, and the profile says so.
TEST(ProfileDevice, ABf16ProfileTimesBf16StepsAndSaysSo) {
  const tula::testing::TempDir dir("tula-profile-precision");
  const auto path = dir.file("p.json");
  write_quick_cpu_profile("--precision bf16", path);
  if (HasFatalFailure()) return;
  EXPECT_EQ(predict::load_profile(path).precision, "bf16");
  std::ifstream in(path);
  EXPECT_EQ(nlohmann::json::parse(in)["measurement"]["precision"], "bf16");

  const auto r = run_command(tula_binary() + " profile --precision fp64 --model lenet5 --input-shape 1x28x28 --out " + path, 60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--precision: 'fp64' is not fp32, bf16 or fp16"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tula::profile
