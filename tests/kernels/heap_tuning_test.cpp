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

// What a training step does to the heap: `count` blocks (activations, a
// layer's gradients) allocated and written during the step and all freed at
// its end. With glibc's adaptive defaults the freed heap top is trimmed back
// to the kernel, so every round faults all its pages in again (~40k faults
// for 16 blocks of 1 MiB over 10 steps); a block above 32 MiB is mapped on
// its own and unmapped when freed, whatever the mmap threshold.
long faults_over_steps(int steps, int count, size_t bytes) {
  const long before = minor_faults();
  for (int s = 0; s < steps; ++s) {
    std::vector<char*> blocks;
    for (int i = 0; i < count; ++i) {
      auto* p = static_cast<char*>(std::malloc(bytes));
      std::memset(p, s, bytes);
      blocks.push_back(p);
    }
    asm volatile("" : : "r"(blocks.data()) : "memory");  // the writes must happen
    for (auto* p : blocks) std::free(p);
  }
  return minor_faults() - before;
}

bool malloc_tunables_in_environment() {
  return std::getenv("GLIBC_TUNABLES") || std::getenv("MALLOC_MMAP_THRESHOLD_") || std::getenv("MALLOC_MMAP_MAX_") ||
         std::getenv("MALLOC_TRIM_THRESHOLD_");
}

TEST(HeapTuning, FreedStepMemoryIsReusedWithoutFaultingPagesAgain) {
  if (malloc_tunables_in_environment()) GTEST_SKIP() << "malloc tunables set in the environment";
  const std::string what = keep_freed_memory_for_reuse();
#if defined(__GLIBC__)
  ASSERT_EQ(what, "malloc: no mapped blocks, trim 512 MiB");
  faults_over_steps(1, 16, 1 << 20);
  const long faults = faults_over_steps(10, 16, 1 << 20);
  EXPECT_LT(faults, 16 * 256) << "freed step memory went back to the kernel between steps";
#else
  GTEST_SKIP() << what;
#endif
}

// An evaluation batch's activations: two blocks of 48 MiB a round, above the
// highest mmap threshold glibc accepts. Mapped, each round would fault their
// 24,576 pages in again (245,760 over 10 rounds).
TEST(HeapTuning, BlocksAboveTheHighestMmapThresholdAreReusedToo) {
  if (malloc_tunables_in_environment()) GTEST_SKIP() << "malloc tunables set in the environment";
  const std::string what = keep_freed_memory_for_reuse();
#if defined(__GLIBC__)
  ASSERT_EQ(what, "malloc: no mapped blocks, trim 512 MiB");
  constexpr size_t kBlock = size_t{48} << 20;
  faults_over_steps(1, 2, kBlock);
  const long faults = faults_over_steps(10, 2, kBlock);
  EXPECT_LT(faults, static_cast<long>(2 * kBlock / 4096)) << "blocks above 32 MiB went back to the kernel between rounds";
#else
  GTEST_SKIP() << what;
#endif
}

}  // namespace
}  // namespace tula::kernels
