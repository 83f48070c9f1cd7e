#include "tune/terminal.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "common/text.hpp"

namespace tula::tune {
namespace {

constexpr int kBarWidth = 30;
constexpr double kLineEvery = 10.0;  // seconds between progress lines off a terminal

}  // namespace

TuneProgress::TuneProgress(const std::string& mode) {
  const auto m = common::progress_mode(mode, ::isatty(STDERR_FILENO) != 0);
  bar_ = m == common::ProgressMode::Bar;
  lines_ = m == common::ProgressMode::Lines;
}

void TuneProgress::say(const std::string& line) {
  if (!bar_ && !lines_) return;
  if (drawn_) std::cerr << "\r\033[K";
  std::cerr << line << std::endl;
  drawn_ = false;
}

std::string range_text(const records::SecondsRange& range) {
  return format_duration(range.low_s) + " to " + format_duration(range.high_s);
}

std::string time_left_text(std::optional<double> remaining_s, const std::optional<records::SecondsRange>& range) {
  if (!remaining_s) return "time left: not yet predicted";
  return "~" + format_duration(*remaining_s) + " left (" + (range ? range_text(*range) + ", " : "") + "predicted)";
}

void TuneProgress::update(double fraction, double elapsed_s, std::optional<double> remaining_s,
                          std::optional<records::SecondsRange> remaining_range, const std::string& detail) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const std::string left = time_left_text(remaining_s, remaining_range);
  if (bar_) {
    const int filled = static_cast<int>(std::round(fraction * kBarWidth));
    std::cerr << "\r\033[K[" << std::string(filled, '#') << std::string(kBarWidth - filled, '.') << "] "
              << static_cast<int>(std::round(100 * fraction)) << "% " << format_duration(elapsed_s) << ", " << left
              << " | " << detail << std::flush;
    drawn_ = true;
  } else if (lines_ && elapsed_s - last_line_at_ >= kLineEvery) {
    std::cerr << static_cast<int>(std::round(100 * fraction)) << "% " << format_duration(elapsed_s) << ", " << left
              << " | " << detail << std::endl;
    last_line_at_ = elapsed_s;
  }
}

void TuneProgress::end_bar() {
  if (drawn_) std::cerr << std::endl;
  drawn_ = false;
}

}  // namespace tula::tune
