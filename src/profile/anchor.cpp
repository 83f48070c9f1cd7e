#include "profile/anchor.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "common/stopwatch.hpp"
#include "common/text.hpp"

namespace tula::profile {
double disagreement(double a_s, double b_s) {
  const double lo = std::min(a_s, b_s), hi = std::max(a_s, b_s);
  if (!(lo > 0)) return hi > 0 ? INFINITY : 0.0;
  return hi / lo - 1;
}

bool anchors_disagree(double a_s, double b_s, double threshold) { return disagreement(a_s, b_s) > threshold; }

void warm_up(const std::function<void()>& step, const AnchorOptions& o) {
  const auto start = common::Clock::now();
  for (int i = 0; i < o.warmup || common::since(start) < o.warmup_s; ++i) step();
}

double AnchorReport::start_s() const {
  return anchors_s.size() > static_cast<size_t>(kept) ? anchors_s[static_cast<size_t>(kept)] : 0.0;
}

double AnchorReport::end_s() const {
  return anchors_s.size() > static_cast<size_t>(kept) + 1 ? anchors_s[static_cast<size_t>(kept) + 1] : 0.0;
}

double AnchorReport::ratio() const { return start_s() > 0 ? end_s() / start_s() : 0.0; }

nlohmann::json AnchorReport::to_json() const {
  nlohmann::json j = {{"batch", batch},
                      {"start_s", start_s()},
                      {"end_s", end_s()},
                      {"ratio", ratio()},
                      {"remeasured", remeasured},
                      {"warning", warning},
                      {"threshold", threshold},
                      {"repeats", repeats},
                      {"anchors_s", anchors_s},
                      {"kept", kept == 0 ? "first" : "second"}};
  if (!remeasure_skipped.empty()) j["remeasure_skipped"] = remeasure_skipped;
  return j;
}

AnchorReport run_anchored(int64_t batch, const AnchoredSteps& steps, const AnchorOptions& o,
                          const std::function<void(const std::string&)>& log) {
  if (!steps.time_anchor || !steps.measure) throw std::invalid_argument("run_anchored: needs time_anchor and measure");
  if (!(o.threshold > 0)) throw std::invalid_argument("run_anchored: the threshold must be positive");
  AnchorReport r;
  r.batch = batch;
  r.threshold = o.threshold;
  r.repeats = o.repeats;
  const auto say = [&](const std::string& line) {
    if (log) log(line);
  };
  const std::string at = fmt::format("anchor (1 worker, batch {}, median of {})", batch, o.repeats);

  r.anchors_s.push_back(steps.time_anchor());
  say("  " + at + " before the grid: " + common::format_seconds(r.anchors_s[0]));
  steps.measure(0);
  r.anchors_s.push_back(steps.time_anchor());
  const double first = disagreement(r.anchors_s[0], r.anchors_s[1]);
  say("  " + at + " after the grid: " + common::format_seconds(r.anchors_s[1]) + " (" + common::percent(first) +
      " apart; threshold " + common::percent(o.threshold) + ")");
  if (first <= o.threshold) return r;

  const std::string refused = steps.may_remeasure ? steps.may_remeasure() : "";
  if (!refused.empty()) {
    r.remeasure_skipped = refused;
    r.warning = "the machine's speed drifted during the compute trials: the anchor step took " +
                common::format_seconds(r.anchors_s[0]) + " before and " + common::format_seconds(r.anchors_s[1]) +
                " after (" + common::percent(first) + " apart); not re-measured: " + refused +
                "; compute times may be off by as much";
    say("  " + r.warning);
    return r;
  }

  say("  the anchors disagree by more than " + common::percent(o.threshold) + ": measuring the grid again");
  r.remeasured = true;
  steps.measure(1);
  r.anchors_s.push_back(steps.time_anchor());
  const double second = disagreement(r.anchors_s[1], r.anchors_s[2]);
  say("  " + at + " after the second grid: " + common::format_seconds(r.anchors_s[2]) + " (" + common::percent(second) +
      " apart)");
  r.kept = second <= first ? 1 : 0;
  const double kept = r.kept == 1 ? second : first;
  say(std::string("  kept the ") + (r.kept == 1 ? "second" : "first") + " grid (its anchors " + common::percent(kept) +
      " apart)");
  if (kept > o.threshold) {
    r.warning = "the machine's speed kept drifting during the compute trials: anchors " +
                common::format_seconds(r.anchors_s[0]) + ", " + common::format_seconds(r.anchors_s[1]) + " and " +
                common::format_seconds(r.anchors_s[2]) + " (threshold " + common::percent(o.threshold) + "); kept the " +
                (r.kept == 1 ? "second" : "first") + " grid, whose anchors are " + common::percent(kept) +
                " apart; compute times may be off by as much";
    say("  " + r.warning);
  }
  return r;
}

}  // namespace tula::profile
