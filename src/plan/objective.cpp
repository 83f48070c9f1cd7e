#include "plan/objective.hpp"

#include <cmath>
#include <stdexcept>

#include "common/text.hpp"
#include "predict/error.hpp"

namespace tula::plan {

namespace {

double parse_positive(const std::string& what, std::string v) {
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument("objective " + what + ": '" + v + "' is not a number");
  }
  if (used != v.size()) throw std::invalid_argument("objective " + what + ": trailing '" + v.substr(used) + "'");
  if (!(d > 0) || !std::isfinite(d)) throw std::invalid_argument("objective " + what + ": must be positive");
  return d;
}

}  // namespace

Objective parse_objective(const std::string& text) {
  if (text == "fastest") return Objective::fastest();
  if (text == "cheapest") return Objective::cheapest();
  if (text == "knee") return Objective::knee();
  const auto eq = text.find('=');
  const std::string key = text.substr(0, eq);
  if (eq != std::string::npos && key == "deadline") {
    std::string v = text.substr(eq + 1);
    double scale = 1;  // hours
    if (!v.empty() && (v.back() == 'h' || v.back() == 'm')) {
      scale = v.back() == 'm' ? 1.0 / 60 : 1.0;
      v.pop_back();
    }
    return Objective::deadline_hours(parse_positive("deadline", v) * scale);
  }
  if (eq != std::string::npos && key == "budget") {
    std::string v = text.substr(eq + 1);
    if (!v.empty() && v.front() == '$') v.erase(0, 1);
    return Objective::budget(parse_positive("budget", v));
  }
  throw std::invalid_argument("objective '" + text + "': expected fastest, cheapest, knee, deadline=HOURS or budget=USD");
}

std::string to_string(const Objective& o) {
  switch (o.kind) {
    case Objective::Kind::Fastest: return "fastest";
    case Objective::Kind::Cheapest: return "cheapest";
    case Objective::Kind::Knee: return "knee";
    case Objective::Kind::Deadline: return "deadline=" + common::format_number(o.limit / 3600, 4) + "h";
    default: return "budget=" + common::format_number(o.limit, 6);
  }
}

std::string describe(const Objective& o) {
  switch (o.kind) {
    case Objective::Kind::Deadline: return "deadline " + common::format_seconds(o.limit);
    case Objective::Kind::Budget: return "budget " + common::format_money(o.limit);
    default: return to_string(o);
  }
}

size_t select_on_front(const Objective& o, const std::vector<TimeCost>& front, size_t knee,
                       const std::string& currency) {
  if (front.empty()) throw predict::InfeasibleError("plan: no feasible configuration to choose from");
  switch (o.kind) {
    case Objective::Kind::Fastest: return 0;
    case Objective::Kind::Cheapest: return front.size() - 1;
    case Objective::Kind::Knee: return knee;
    case Objective::Kind::Deadline: {
      // Along the front cost falls as time grows: the last one in time is the cheapest.
      size_t pick = front.size();
      for (size_t i = 0; i < front.size() && front[i].time <= o.limit; ++i) pick = i;
      if (pick == front.size()) {
        throw predict::InfeasibleError("plan: no configuration meets the deadline of " +
                                       common::format_seconds(o.limit) + "; the fastest takes " +
                                       common::format_seconds(front.front().time) + " (" +
                                       common::format_number(front.front().time / o.limit, 3) + "x the deadline)");
      }
      return pick;
    }
    default: {
      for (size_t i = 0; i < front.size(); ++i) {
        if (front[i].cost <= o.limit) return i;
      }
      throw predict::InfeasibleError("plan: no configuration fits a budget of " + common::format_money(o.limit) +
                                     (currency == "USD" ? "" : " " + currency) + "; the cheapest costs " +
                                     common::format_money(front.back().cost) + " (" +
                                     common::format_number(front.back().cost / o.limit, 3) + "x the budget)");
    }
  }
}

}  // namespace tula::plan
