#include "kernels/heap_tuning.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace tula::kernels {
namespace {

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// What a training step does to the heap: many blocks (activations, a layer's
// gradients) allocated and written during the step and all freed at its end.
// With glibc's adaptive defaults the freed heap top is trimmed back to the
// kernel, so every round faults all its pages in again (~40k faults here).
long faults_over_steps(int steps) {
  const long before = minor_faults();
  for (int s = 0; s < steps; ++s) {
    std::vector<char*> blocks;
    for (int i = 0; i < 16; ++i) {
      auto* p = static_cast<char*>(std::malloc(1 << 20));
      std::memset(p, s, 1 << 20);
      blocks.push_back(p);
    }
    asm volatile("" : : "r"(blocks.data()) : "memory");  // the writes must happen
    for (auto* p : blocks) std::free(p);
  }
  return minor_faults() - before;
}

TEST(HeapTuning, FreedStepMemoryIsReusedWithoutFaultingPagesAgain) {
  if (std::getenv("GLIBC_TUNABLES") || std::getenv("MALLOC_MMAP_THRESHOLD_")) {
    GTEST_SKIP() << "malloc tunables set in the environment";
  }
  const std::string what = keep_freed_memory_for_reuse();
#if defined(__GLIBC__)
  ASSERT_EQ(what, "malloc thresholds: mmap 32 MiB, trim 512 MiB");
  faults_over_steps(1);
  const long faults = faults_over_steps(10);
  EXPECT_LT(faults, 16 * 256) << "freed step memory went back to the kernel between steps";
#else
  GTEST_SKIP() << what;
#endif
}

}  // namespace
}  // namespace tula::kernels
