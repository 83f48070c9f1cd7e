// Keeps the memory a training step frees in the process for the next step.
//
// A step allocates and frees the same large tensors (activations, gradients
// of a layer, im2col buffers) every iteration. With glibc's defaults a block
// above the mmap threshold is mapped fresh and unmapped on free, and the heap
// top is trimmed back to the kernel; the next step then faults every page in
// again. Measured on resnet20, 2 workers, batch 16: 518k minor page faults
// and 2.3 s of kernel time over 65 steps, against 87k and 0.8 s with the
// thresholds below, and 6% more samples/s (docs/benchmarks.md).
#pragma once

#include <string>

namespace tula::kernels {

// Raises glibc's mmap threshold to its ceiling (32 MiB) and the trim threshold
// to 512 MiB, fixed (glibc otherwise adapts them). Does nothing when the user
// set malloc tunables in the environment (GLIBC_TUNABLES with "malloc", or
// MALLOC_MMAP_THRESHOLD_ / MALLOC_TRIM_THRESHOLD_): theirs win. Returns a
// one-line description of what was done, for logs.
std::string keep_freed_memory_for_reuse();

}  // namespace tula::kernels
