// Progress of an epoch for a person: a bar with rate and ETA redrawn in place on
// a terminal, plain periodic lines otherwise (logs, CI).
#pragma once
#include <chrono>
#include <cstdint>
#include <string>

#include "common/text.hpp"

namespace tula::train {

class Progress {
 public:
  // mode: "auto" (bar if stderr is a terminal), "bar", "lines", "none".
  Progress(const std::string& mode, int64_t total_epochs);
  void start_epoch(int64_t epoch, int64_t steps_in_epoch);
  void update(int64_t step_in_epoch, double loss, double samples_per_second);
  void end_epoch(const std::string& summary);

 private:
  common::ProgressMode mode_;
  int64_t total_epochs_;
  int64_t epoch_ = 0;
  int64_t steps_ = 0;
  std::chrono::steady_clock::time_point epoch_start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace tula::train
