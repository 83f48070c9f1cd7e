#include "train/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <stdexcept>

#include "common/stopwatch.hpp"
#include "common/text.hpp"

namespace tula::train {
namespace {

using common::format_duration;

}  // namespace

Progress::Progress(const std::string& mode, int64_t total_epochs)
    : mode_(common::progress_mode(mode, isatty(STDERR_FILENO) != 0)), total_epochs_(total_epochs) {}

void Progress::start_epoch(int64_t epoch, int64_t steps_in_epoch) {
  epoch_ = epoch;
  steps_ = steps_in_epoch;
  epoch_start_ = last_draw_ = std::chrono::steady_clock::now();
}

void Progress::update(int64_t step_in_epoch, double loss, double samples_per_second) {
  if (mode_ == common::ProgressMode::None) return;
  const auto now = std::chrono::steady_clock::now();
  const double since_draw = common::seconds_between(last_draw_, now);
  const bool last = step_in_epoch >= steps_;
  // A bar redraws at most 10 times a second; lines come every 10 s.
  if (!last && since_draw < (mode_ == common::ProgressMode::Bar ? 0.1 : 10.0)) return;
  last_draw_ = now;
  const double elapsed = common::seconds_between(epoch_start_, now);
  const double eta = step_in_epoch > 0 ? elapsed / step_in_epoch * (steps_ - step_in_epoch) : 0.0;
  if (mode_ == common::ProgressMode::Bar) {
    constexpr int kWidth = 28;
    const int filled = steps_ > 0 ? static_cast<int>(kWidth * step_in_epoch / steps_) : kWidth;
    std::fprintf(stderr, "\repoch %lld/%lld [%.*s%*s] %lld/%lld loss %.4f %.0f samples/s ETA %s ",
                 static_cast<long long>(epoch_ + 1), static_cast<long long>(total_epochs_), filled,
                 "############################", kWidth - filled, "", static_cast<long long>(step_in_epoch),
                 static_cast<long long>(steps_), loss, samples_per_second, format_duration(eta).c_str());
  } else {
    std::fprintf(stderr, "epoch %lld/%lld step %lld/%lld loss %.4f %.0f samples/s ETA %s\n",
                 static_cast<long long>(epoch_ + 1), static_cast<long long>(total_epochs_),
                 static_cast<long long>(step_in_epoch), static_cast<long long>(steps_), loss,
                 samples_per_second, format_duration(eta).c_str());
  }
  std::fflush(stderr);
}

void Progress::end_epoch(const std::string& summary) {
  if (mode_ == common::ProgressMode::None) return;
  if (mode_ == common::ProgressMode::Bar) std::fprintf(stderr, "\n");
  std::fprintf(stderr, "%s\n", summary.c_str());
  std::fflush(stderr);
}

}  // namespace tula::train
