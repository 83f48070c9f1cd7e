// The parts of the tune report computed from its own rows: how far the
// predicted remaining time was off at points of the run, and the closing
// summary printed on the terminal. No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include "records/tune_report.hpp"

namespace tula::tune {

// For 25%, 50% and 75% of the run (of `end_s`): the first timeline point at
// or after that time, its predicted remaining time, the measured remaining
// time (end_s - its t_s) and the relative error. None where no point is.
std::vector<records::RemainingError> remaining_time_errors(const std::vector<records::TimelinePoint>& timeline,
                                                           double end_s);

// A few lines: the outcome, the configuration, time and cost predicted
// against measured, the profiling share, the re-plans, where the report is.
std::string closing_summary(const records::TuneReport& report);

}  // namespace tula::tune
