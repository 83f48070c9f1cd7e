#include "profile/memory_meter.hpp"

#include <algorithm>
#include <mutex>

#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>

namespace tula::profile {
namespace {

// The type of the allocator's running totals in reportMemoryUsage: int64_t in
// LibTorch 1.x, size_t in 2.x. Read off the base class's own declaration, so
// the override below matches whichever LibTorch this is built against.
template <typename Method>
struct ThirdParameter;
template <typename Class, typename Result, typename A, typename B, typename C, typename... Rest>
struct ThirdParameter<Result (Class::*)(A, B, C, Rest...)> {
  using type = C;
};
using AllocatorTotal = ThirdParameter<decltype(&c10::MemoryReportingInfoBase::reportMemoryUsage)>::type;

}  // namespace

struct AllocationMeter::Reporter : public c10::MemoryReportingInfoBase {
  void reportMemoryUsage(void* /*ptr*/, int64_t alloc_size, AllocatorTotal /*total_allocated*/,
                         AllocatorTotal /*total_reserved*/, c10::Device /*device*/) override {
    // Reported from any thread the work runs on; a mutex keeps live and peak consistent.
    std::lock_guard<std::mutex> lock(mutex);
    live += alloc_size;
    peak = std::max(peak, live);
    ++events;
  }
  bool memoryProfilingEnabled() const override { return true; }

  mutable std::mutex mutex;
  int64_t live = 0;
  int64_t peak = 0;
  int64_t events = 0;
};

struct AllocationMeter::Guard {
  explicit Guard(std::shared_ptr<c10::DebugInfoBase> info)
      : guard(c10::DebugInfoKind::PROFILER_STATE, std::move(info)) {}
  c10::DebugInfoGuard guard;
};

AllocationMeter::AllocationMeter() : reporter_(std::make_shared<Reporter>()) {
  guard_ = std::make_unique<Guard>(reporter_);
}

AllocationMeter::~AllocationMeter() = default;

int64_t AllocationMeter::live_bytes() const {
  std::lock_guard<std::mutex> lock(reporter_->mutex);
  return reporter_->live;
}

int64_t AllocationMeter::peak_bytes() const {
  std::lock_guard<std::mutex> lock(reporter_->mutex);
  return reporter_->peak;
}

void AllocationMeter::reset_peak() {
  std::lock_guard<std::mutex> lock(reporter_->mutex);
  reporter_->peak = reporter_->live;
}

bool AllocationMeter::saw_allocations() const {
  std::lock_guard<std::mutex> lock(reporter_->mutex);
  return reporter_->events > 0;
}

}  // namespace tula::profile
