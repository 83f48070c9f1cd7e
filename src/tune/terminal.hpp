// What `tula tune` shows on the terminal: a line per phase, then a progress
// bar with the predicted time left (redrawn in place on a terminal, a line
// every few seconds otherwise), then the closing summary.
// No LibTorch here.
#pragma once
#include <optional>
#include <string>

#include "common/text.hpp"

namespace tula::tune {

class TuneProgress {
 public:
  // "auto" (a bar when stderr is a terminal, else lines), "bar", "lines", "none".
  explicit TuneProgress(const std::string& mode);
  void say(const std::string& line);  // a whole line, above the bar
  void update(double fraction, double elapsed_s, std::optional<double> remaining_s, const std::string& detail);
  void end_bar();

 private:
  bool bar_ = false, lines_ = false, drawn_ = false;
  double last_line_at_ = -1e9;
};

// "1h02m", "3m05s", "42s": the one duration format of the progress displays.
using common::format_duration;

}  // namespace tula::tune
