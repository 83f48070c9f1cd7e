// `tula tune --device`: checked, and kept with the job's options (a resumed
// job profiles and trains where it began; older options files train on the CPU).
#include "tune/tune_options.hpp"

#include <gtest/gtest.h>

namespace tula::tune {
namespace {

TuneOptions valid() {
  TuneOptions o;
  o.job.target_accuracy = 0.85;
  o.job.out_dir = "/tmp/job";
  return o;
}

TEST(TuneOptionsDevice, CpuCudaOrAutoAndNothingElse) {
  for (const char* device : {"cpu", "cuda", "auto"}) {
    auto o = valid();
    o.job.device = device;
    EXPECT_NO_THROW(o.validate()) << device;
  }
  auto o = valid();
  o.job.device = "gpu";
  try {
    o.validate();
    FAIL() << "--device gpu accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--device must be cpu, cuda or auto"), std::string::npos) << e.what();
  }
}

TEST(TuneOptionsDevice, TheDeviceIsKeptWithTheJobsOptions) {
  auto o = valid();
  o.job.device = "cuda";
  EXPECT_EQ(tune_options_from_json(to_json(o)).job.device, "cuda");
  auto older = to_json(valid());
  older.erase("device");
  EXPECT_EQ(tune_options_from_json(older).job.device, "cpu");
}

}  // namespace
}  // namespace tula::tune
