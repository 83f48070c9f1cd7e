// The paragraph that says why the planner chose what it chose: the
// prediction with its interval, how it compares with the front's ends, and
// which limit binds (memory, the input pipeline, communication, statistical efficiency, for fixed
// epochs the batch cap, or simply the price the objective was willing to pay).
#pragma once
#include <string>

#include "plan/planner.hpp"

namespace tula::plan {

struct Explanation {
  std::string limit;      // "memory", "input", "communication", "statistical efficiency", "batch cap", "price"
  std::string paragraph;
};

Explanation explain(const Plan& plan, const predict::Predictor& predictor);

}  // namespace tula::plan
