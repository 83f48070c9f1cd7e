// The range an option's number must lie in, said and checked one way for
// every command and the API: "must be a number from 0 to below 1 (got 1.5)".
// The ranges of options that `tula tune`, the job spec and `tula train` all
// take are declared here once (tune/option_schema.cpp holds the others).
#pragma once
#include <optional>
#include <string>

namespace tula::common {

struct NumberRange {
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;  // an end excluded
};

// "a number from 0 to 10000", "a number above 0 and at most 100", "a number from 0 to below 1".
std::string describe_range(const NumberRange& r);

bool in_range(const NumberRange& r, double v);

// "must be a number from 0 to below 1 (got 1.5)" where `v` is outside; none within.
std::optional<std::string> range_refusal(const NumberRange& r, double v);

// The shortest text that reads back to the same double ("0.1", "0.3333333333333333").
std::string exact_number(double v);

// A test accuracy to stop at, as a fraction (0: none): 1 would never be met
// by a job that may give up, and 85 is a percentage typed for a fraction.
inline constexpr NumberRange kTargetAccuracy{0, 1, false, true};
// The decay of the weights' moving average the evaluation reads (0: the weights themselves).
inline constexpr NumberRange kEvalAverage{0, 1, false, true};

}  // namespace tula::common
