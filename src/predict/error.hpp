// The three ways a prediction can fail, as distinct types so a caller (the
// `tula` commands, the tests) can tell "your file is wrong" from "your
// measurements do not support a fit" from "no configuration can do what you
// asked".
#pragma once
#include <stdexcept>
#include <string>

namespace tula::predict {

// A profile or metrics file that is not what it must be: malformed JSON, a
// format or version this code does not read, a missing or ill-typed field. The
// message names the field by its JSON path (e.g. "samples.compute[2].batch_per_worker").
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Measurements that are well formed but cannot support the fit asked of them:
// too few distinct points, a slope of the wrong sign beyond its noise, a
// singular design. The message names the sample set and says what to measure.
class FitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A request that no configuration satisfies: a batch that fits no device, a
// deadline or budget nothing meets. The message says how far off the best
// achievable value is.
class InfeasibleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tula::predict
