// What `tula tune` shows on the terminal: a line per phase, then a progress
// bar with the predicted time left (redrawn in place on a terminal, a line
// every few seconds otherwise), then the closing summary.
// No LibTorch here.
#pragma once
#include <optional>
#include <string>

#include "common/text.hpp"
#include "records/tune_report.hpp"

namespace tula::tune {

class TuneProgress {
 public:
  // "auto" (a bar when stderr is a terminal, else lines), "bar", "lines", "none".
  explicit TuneProgress(const std::string& mode);
  void say(const std::string& line);  // a whole line, above the bar
  void update(double fraction, double elapsed_s, std::optional<double> remaining_s,
              std::optional<records::SecondsRange> remaining_range, const std::string& detail);
  void end_bar();

 private:
  bool bar_ = false, lines_ = false, drawn_ = false;
  double last_line_at_ = -1e9;
};

// "1h02m", "3m05s", "42s": the one duration format of the progress displays.
using common::format_duration;

// "2m10s to 3m05s".
std::string range_text(const records::SecondsRange& range);

// The progress line's time left: "~2m30s left (2m10s to 3m05s, predicted)",
// the range where there is one, or that none is predicted yet.
std::string time_left_text(std::optional<double> remaining_s, const std::optional<records::SecondsRange>& range);

}  // namespace tula::tune
