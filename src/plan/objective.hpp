// What the planner optimizes: fastest, cheapest, the knee of the time/cost
// front, the cheapest configuration meeting a deadline, or the fastest within a
// budget. Every one of these optima lies on the Pareto front, so each is a
// walk along it.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "plan/pareto.hpp"

namespace tula::plan {

struct Objective {
  enum class Kind { Fastest, Cheapest, Knee, Deadline, Budget };
  Kind kind = Kind::Knee;
  double limit = 0;  // Deadline: seconds; Budget: currency units

  static Objective fastest() { return {Kind::Fastest, 0}; }
  static Objective cheapest() { return {Kind::Cheapest, 0}; }
  static Objective knee() { return {Kind::Knee, 0}; }
  static Objective deadline_hours(double h) { return {Kind::Deadline, h * 3600}; }
  static Objective budget(double usd) { return {Kind::Budget, usd}; }

  // A deadline or a budget: a limit the plan must meet, where the others
  // are a quantity to make least.
  bool limited() const { return kind == Kind::Deadline || kind == Kind::Budget; }
};

// "fastest", "cheapest", "knee", "deadline=H" (hours; "deadline=90m" and
// "deadline=2h" also read), "budget=USD" ("budget=$120" too). Throws
// std::invalid_argument naming what was wrong.
Objective parse_objective(const std::string& text);
std::string to_string(const Objective& o);   // parseable back: "deadline=2h"
std::string describe(const Objective& o);    // for people: "deadline 2 h", "budget $50.00"


// Index into `front` (fastest first, cost falling) that the objective picks;
// `knee` is the knee's index into `front`. Deadline and budget nothing meets
// throw predict::InfeasibleError saying how far off the best one is.
size_t select_on_front(const Objective& o, const std::vector<TimeCost>& front, size_t knee,
                       const std::string& currency = "USD");

}  // namespace tula::plan
