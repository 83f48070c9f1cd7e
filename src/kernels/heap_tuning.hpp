// Keeps the memory a training step frees in the process for the next step.
//
// A step allocates and frees the same large tensors (activations, gradients
// of a layer, im2col buffers) every iteration. With glibc's defaults a block
// above the mmap threshold is mapped fresh and unmapped on free, and the heap
// top is trimmed back to the kernel; the next step then faults every page in
// again. Measured on resnet20, 2 workers, batch 16: 518k minor page faults
// and 2.3 s of kernel time over 65 steps, against 87k and 0.8 s with fixed
// thresholds, and 6% more samples/s (docs/benchmarks/engine.md). glibc maps any
// block above 32 MiB (its highest mmap threshold) whatever the threshold, and
// an evaluation batch's activations are such blocks (small_cnn at 512
// samples: 51 MiB): with the 32 MiB threshold alone a small_cnn run of 60
// steps and 5 evaluations of 5,000 samples faulted 0.3-2.0 million pages (0.1
// million with no block mapped), and its evaluations took 1.1-1.7 times as
// long (docs/benchmarks/engine.md, "Evaluations without page faults").
#pragma once

#include <string>

namespace tula::kernels {

// Serves every block from the heap, none mapped on its own (M_MMAP_MAX 0), and
// trims the heap top only past 512 MiB free, both fixed (glibc otherwise
// adapts its thresholds); a block freed is reused by the next allocation that
// fits. Blocks larger than a thread's arena can hold are still mapped (glibc
// falls back to it). Does nothing when the user set malloc tunables in the
// environment (GLIBC_TUNABLES with "malloc", or MALLOC_MMAP_THRESHOLD_,
// MALLOC_MMAP_MAX_ or MALLOC_TRIM_THRESHOLD_): theirs win. Returns a one-line
// description of what was done, for logs.
std::string keep_freed_memory_for_reuse();

}  // namespace tula::kernels
