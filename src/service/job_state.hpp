// A service job's life: queued -> profiling -> planning -> training ->
// succeeded | failed | cancelled. Which moves are allowed, and which states
// are final. No LibTorch here.
#pragma once
#include <array>
#include <string>

namespace tula::service {

inline constexpr std::array<const char*, 7> kJobStates = {"queued",    "profiling", "planning", "training",
                                                          "succeeded", "failed",    "cancelled"};

inline bool is_job_state(const std::string& s) {
  for (const char* k : kJobStates)
    if (s == k) return true;
  return false;
}

inline bool is_final(const std::string& s) { return s == "succeeded" || s == "failed" || s == "cancelled"; }
inline bool is_running(const std::string& s) { return s == "profiling" || s == "planning" || s == "training"; }

// Forward only: a phase may be skipped (a job given a profile plans at once),
// never revisited; any unfinished job may fail or be cancelled.
inline bool can_move(const std::string& from, const std::string& to) {
  if (is_final(from) || from == to) return false;
  if (to == "failed" || to == "cancelled") return true;
  const auto rank = [](const std::string& s) {
    for (size_t i = 0; i < kJobStates.size(); ++i)
      if (s == kJobStates[i]) return static_cast<int>(i);
    return -1;
  };
  return rank(to) > rank(from) && rank(from) >= 0;
}

}  // namespace tula::service
