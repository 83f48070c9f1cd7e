// The anchor check: one configuration (one worker, forward+backward at a mid
// batch of the grid) timed before and after the compute trials. This machine's
// speed drifts, by up to 2x for minutes at a time; a grid measured across such
// a drift fits a line that no single state of the machine has. When the two
// anchors disagree the grid is measured once more and the anchor timed again,
// and the profile keeps the grid taken while the machine was steadiest. No
// LibTorch: the timings come in through callbacks, so the logic is tested with
// injected numbers.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::profile {

// Relative disagreement between two anchors that triggers a re-measurement.
// 10%: the median of 5 steps moves by a few percent between two anchors
// while nothing else runs (1% and 5% in quick profiles of small_cnn on this
// 2-core machine), so 10% is outside that noise and rarely fires without a
// real drift; and a drift below 10% moves a predicted epoch by less than the
// fit's own interval usually spans, while the drifts seen here (2x and more
// when another job takes a core; a 39% error on a predicted epoch) are far
// above it.
inline constexpr double kAnchorThreshold = 0.10;

struct AnchorOptions {
  double threshold = kAnchorThreshold;
  int warmup = 1;   // steps before the timed ones, each time the anchor is taken
  // ... and warming goes on until this many seconds have passed. After the
  // process has waited (on the communication trials' workers, say), this
  // machine runs the next 40-60 ms of steps about 3x slower (LeNet-5 at batch
  // 16: six or so steps at 7.8-8.0 ms, then 2.6-2.7 ms again, in three of three
  // runs timed step by step after 0.7 s asleep), which one warm-up step does not
  // cover: the anchor after the whole profile read 150-210% above the grid's.
  double warmup_s = 0.1;
  int repeats = 5;  // timed steps; the anchor is their median
};

struct AnchorReport {
  int64_t batch = 0;
  double threshold = kAnchorThreshold;
  int repeats = 0;
  // Each anchor's median seconds in the order taken: before the grid, after
  // it, and after the second grid when there was one.
  std::vector<double> anchors_s;
  bool remeasured = false;
  int kept = 0;                // which grid measurement the profile keeps: 0 the first, 1 the second
  std::string remeasure_skipped;  // why a disagreement was not re-measured (the time budget)
  std::string warning;         // empty when the kept grid's anchors agree

  double start_s() const;  // the anchor before the kept grid
  double end_s() const;    // the anchor after it
  double ratio() const;    // end_s / start_s
  // {"batch", "start_s", "end_s", "ratio", "remeasured", "warning", ...} for
  // the profile's measurement section.
  nlohmann::json to_json() const;
};

// True when the slower of the two exceeds the faster by more than `threshold`
// (relative): symmetric, so a slow start and a slow end count alike.
bool anchors_disagree(double a_s, double b_s, double threshold);

// The relative disagreement max/min - 1 of two anchors (0 when equal).
double disagreement(double a_s, double b_s);

// Runs `step` at least `options.warmup` times and until `options.warmup_s`
// seconds have passed since the first: the warm-up before an anchor's timed steps.
void warm_up(const std::function<void()>& step, const AnchorOptions& options);

struct AnchoredSteps {
  // Times the anchor once (warm-up and repeats included) and returns its median seconds.
  std::function<double()> time_anchor;
  // Measures the grid; `attempt` 0 the first time, 1 when re-measured. The
  // caller keeps each attempt's results and uses the report's `kept` one.
  std::function<void(int attempt)> measure;
  // Asked before re-measuring: "" to go ahead, or why not (e.g. the time
  // budget would be exceeded). Empty function: always go ahead.
  std::function<std::string()> may_remeasure;
};

// anchor, grid, anchor; if the anchors disagree (anchors_disagree) and
// re-measuring is allowed: grid again, anchor again. The profile keeps the
// grid whose two anchors agree better, the second on a tie or when both agree:
// the grid measured across the smaller drift, and when the machine has
// settled, the later one (taken in the state it is now in). A kept grid whose
// anchors still disagree, or a disagreement not re-measured, sets `warning`.
// `log` gets one line per anchor and one for the decision.
AnchorReport run_anchored(int64_t batch, const AnchoredSteps& steps, const AnchorOptions& options,
                          const std::function<void(const std::string&)>& log);

}  // namespace tula::profile
