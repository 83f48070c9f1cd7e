#include "kernels/heap_tuning.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace tula::kernels {
namespace {

bool user_set_malloc_tunables() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "malloc")) return true;
  return std::getenv("MALLOC_MMAP_THRESHOLD_") || std::getenv("MALLOC_MMAP_MAX_") ||
         std::getenv("MALLOC_TRIM_THRESHOLD_");
}

}  // namespace

std::string keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  if (user_set_malloc_tunables()) return "malloc: left as set in the environment";
  // No mapped blocks: a threshold cannot do it, as glibc caps it at 32 MiB.
  const int trim_threshold = 512 << 20;
  if (mallopt(M_MMAP_MAX, 0) != 1 || mallopt(M_TRIM_THRESHOLD, trim_threshold) != 1) {
    return "malloc: glibc refused the settings; its defaults kept";
  }
  return "malloc: no mapped blocks, trim 512 MiB";
#else
  return "malloc: not glibc; the allocator's defaults kept";
#endif
}

}  // namespace tula::kernels
