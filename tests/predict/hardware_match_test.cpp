#include "predict/hardware_match.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/math_library.hpp"
#include "helpers/temp_dir.hpp"

namespace tula::predict {
namespace {

HardwareInfo cpu(const std::string& model, int64_t cores) {
  HardwareInfo h;
  h.cpu_model = model;
  h.cores = cores;
  h.device.kind = "cpu";
  h.device.name = model;
  h.device.memory_bytes = 8LL << 30;
  h.hostname = "node1";
  h.math_library = "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3";
  return h;
}

TEST(HardwareMatch, ReadsTheCpuModelFromCpuinfo) {
  const tula::testing::TempDir dir;
  std::ofstream(dir.file("cpuinfo")) << "processor\t: 0\nvendor_id\t: GenuineIntel\n"
                                        "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz \nflags\t\t: fpu\n";
  EXPECT_EQ(cpu_model_name(dir.file("cpuinfo")), "Intel(R) Xeon(R) CPU @ 2.20GHz");
  EXPECT_EQ(cpu_model_name(dir.file("missing")), "unknown");
}

TEST(HardwareMatch, ThisMachineIsItsCpuWithTheUsableCores) {
  const auto here = this_machine_cpu();
  EXPECT_EQ(here.cpu_model, cpu_model_name());
  EXPECT_EQ(here.cores, usable_cores());
  EXPECT_GE(here.cores, 1);
  EXPECT_EQ(here.device.kind, "cpu");
  EXPECT_EQ(here.device.name, here.cpu_model);
  EXPECT_EQ(here.math_library, common::math_library());
  std::string why;
  EXPECT_TRUE(same_hardware(here, this_machine_cpu(), &why)) << why;
}

TEST(HardwareMatch, SameModelCoresAndDeviceMatchWhateverTheHostAndMemory) {
  auto a = cpu("Intel Xeon", 8);
  auto b = cpu("Intel Xeon", 8);
  b.hostname = "node2";
  b.device.memory_bytes = 16LL << 30;
  std::string why = "untouched";
  EXPECT_TRUE(same_hardware(a, b, &why));
  EXPECT_EQ(why, "untouched") << "a match leaves the reason alone";
  EXPECT_TRUE(same_hardware(a, b));  // no reason asked for
  // A CPU profile that names no device is its CPU.
  a.device.name.clear();
  EXPECT_TRUE(same_hardware(a, b, &why));
}

TEST(HardwareMatch, ADifferentCpuOrCoreCountSaysHow) {
  std::string why;
  EXPECT_FALSE(same_hardware(cpu("X", 8), cpu("Y", 2), &why));
  EXPECT_EQ(why, "profiled on 'X' with 8 cores; this machine is 'Y' with 2 cores");
  EXPECT_FALSE(same_hardware(cpu("X", 8), cpu("X", 1), &why));
  EXPECT_EQ(why, "profiled on 'X' with 8 cores; this machine is 'X' with 1 core");
  EXPECT_FALSE(same_hardware(cpu("X", 8), cpu("Y", 8)));
}

TEST(HardwareMatch, ADifferentDeviceDoesNotMatch) {
  auto gpu = cpu("X", 8);
  gpu.device.kind = "cuda";
  gpu.device.name = "NVIDIA H100";
  std::string why;
  EXPECT_FALSE(same_hardware(gpu, cpu("X", 8), &why));
  EXPECT_NE(why.find("cuda device 'NVIDIA H100'"), std::string::npos) << why;
  auto other_gpu = gpu;
  other_gpu.device.name = "NVIDIA A100";
  EXPECT_FALSE(same_hardware(gpu, other_gpu, &why));
  EXPECT_NE(why.find("'NVIDIA A100'"), std::string::npos) << why;
  EXPECT_TRUE(same_hardware(gpu, gpu));
  // One GPU's profile does not describe a node of eight (its communication does not).
  auto eight = gpu;
  eight.device.count = 8;
  EXPECT_FALSE(same_hardware(gpu, eight, &why));
  EXPECT_NE(why.find("'NVIDIA H100' (x8)"), std::string::npos) << why;
  EXPECT_NE(hardware_fingerprint(gpu), hardware_fingerprint(eight));
  // A CPU is one device whatever the count says: CPU profiles keep their cache names.
  auto a = cpu("X", 8), b = cpu("X", 8);
  b.device.count = 3;
  EXPECT_TRUE(same_hardware(a, b));
  EXPECT_EQ(hardware_fingerprint(a), "cpu=X;cores=8;device=cpu:X;math=" + a.math_library);
}

// On the same CPU a model's steps can take twice as long with the reference
// BLAS as with OpenBLAS: a profile timed with one is not used with the other.
TEST(HardwareMatch, AnotherMathLibraryDoesNotMatchAndSaysWhich) {
  auto reference = cpu("X", 8);
  reference.math_library = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0";
  std::string why;
  EXPECT_FALSE(same_hardware(reference, cpu("X", 8), &why));
  EXPECT_EQ(why,
            "profiled with the math library '/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0'; this process calls "
            "'/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3'");
  // A profile written before the library was recorded names none.
  auto older = cpu("X", 8);
  older.math_library.clear();
  EXPECT_FALSE(same_hardware(older, cpu("X", 8), &why));
  EXPECT_EQ(why, "profiled with the math library none; this process calls "
                 "'/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3'");
  // Another machine is named as such first.
  EXPECT_FALSE(same_hardware(reference, cpu("Y", 8), &why));
  EXPECT_EQ(why, "profiled on 'X' with 8 cores; this machine is 'Y' with 8 cores");
}

TEST(HardwareMatch, TheFingerprintHoldsWhatIsCompared) {
  auto a = cpu("X", 8);
  auto b = a;
  b.hostname = "elsewhere";
  b.device.memory_bytes = 1;
  EXPECT_EQ(hardware_fingerprint(a), hardware_fingerprint(b));
  b.cores = 4;
  EXPECT_NE(hardware_fingerprint(a), hardware_fingerprint(b));
  b = a;
  b.device.kind = "cuda";
  EXPECT_NE(hardware_fingerprint(a), hardware_fingerprint(b));
  b = a;
  b.math_library = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0";
  EXPECT_NE(hardware_fingerprint(a), hardware_fingerprint(b));
}

}  // namespace
}  // namespace tula::predict
