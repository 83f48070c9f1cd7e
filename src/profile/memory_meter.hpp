// Counts the bytes LibTorch's allocator hands out while a meter is alive, on
// this thread and on the threads its work is handed to (autograd's engine
// carries the thread-local state over).
//
// How: c10's allocators report every allocation and free to the profiler
// hook of the thread-local debug info (c10::MemoryReportingInfoBase, what
// torch.profiler(profile_memory=True) uses). A meter installs its own reporter
// there, so counting needs no profiler and no change to the allocator. On CPU
// this sees every tensor allocated through c10 (weights, gradients, optimizer
// state, activations saved for backward, temporaries); it does not see
// oneDNN's private scratch buffers or the allocator's own overhead. The counts
// are exact and deterministic, which RSS (page-granular, never shrinking) is not.
#pragma once
#include <cstdint>
#include <memory>

namespace tula::profile {

class AllocationMeter {
 public:
  AllocationMeter();   // starts counting on this thread
  ~AllocationMeter();  // stops; must be destroyed on the thread that made it
  AllocationMeter(const AllocationMeter&) = delete;
  AllocationMeter& operator=(const AllocationMeter&) = delete;

  // Bytes allocated since the meter started and not yet freed (frees of
  // blocks allocated before it started are not seen: they do not count).
  int64_t live_bytes() const;
  // Largest live_bytes() since the start or the last reset_peak().
  int64_t peak_bytes() const;
  void reset_peak();
  // Whether the allocator reported anything at all: false means this LibTorch
  // does not report allocations and the meter's numbers are meaningless.
  bool saw_allocations() const;

 private:
  struct Reporter;
  struct Guard;
  std::shared_ptr<Reporter> reporter_;
  std::unique_ptr<Guard> guard_;
};

}  // namespace tula::profile
