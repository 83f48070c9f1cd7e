#include "tune/terminal.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace tula::tune {
namespace {

constexpr int kBarWidth = 30;
constexpr double kLineEvery = 10.0;  // seconds between progress lines off a terminal

}  // namespace

TuneProgress::TuneProgress(const std::string& mode) {
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  bar_ = mode == "bar" || (mode == "auto" && tty);
  lines_ = mode == "lines" || (mode == "auto" && !tty);
}

void TuneProgress::say(const std::string& line) {
  if (!bar_ && !lines_) return;
  if (drawn_) std::cerr << "\r\033[K";
  std::cerr << line << std::endl;
  drawn_ = false;
}

void TuneProgress::update(double fraction, double elapsed_s, std::optional<double> remaining_s,
                          const std::string& detail) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  const std::string left = remaining_s ? "~" + format_duration(*remaining_s) + " left (predicted)" : "time left: not yet predicted";
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

std::string format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  char buffer[32];
  if (s >= 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", s / 3600, (s % 3600) / 60);
  } else if (s >= 60) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", s / 60, s % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%llds", s);
  }
  return buffer;
}

}  // namespace tula::tune
