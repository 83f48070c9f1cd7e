// Wall-clock intervals on the monotonic clock, in seconds, as every timing in
// Tula reports them.
#pragma once
#include <chrono>

namespace tula::common {

using Clock = std::chrono::steady_clock;

inline double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

inline double since(Clock::time_point start) { return seconds_between(start, Clock::now()); }

}  // namespace tula::common
