#include "tune/tune_report.hpp"

#include <fmt/format.h>

#include "common/text.hpp"
#include "tune/terminal.hpp"

namespace tula::tune {

std::vector<records::RemainingError> remaining_time_errors(const std::vector<records::TimelinePoint>& timeline,
                                                           double end_s) {
  std::vector<records::RemainingError> out;
  if (end_s <= 0) return out;
  for (double fraction : {0.25, 0.5, 0.75}) {
    const double at = fraction * end_s;
    for (const auto& point : timeline) {
      if (point.t_s < at) continue;
      const double measured = end_s - point.t_s;
      const double predicted = point.predicted_remaining_s;
      out.push_back({fraction, point.t_s, predicted, measured, measured > 0 ? (predicted - measured) / measured : 0.0,
                     point.predicted_remaining_range});
      break;
    }
  }
  return out;
}

using common::signed_percent;

std::string closing_summary(const records::TuneReport& report) {
  std::string s = fmt::format("tune {}: {}\n", records::to_string(report.state), report.reason);
  if (report.chosen) {
    const auto& c = report.chosen->config;
    s += fmt::format("  configuration chosen: {} workers x {}", c.workers_per_node * c.nodes, c.batch_per_worker);
    if (c.accumulation_steps > 1) s += fmt::format(" x {}", c.accumulation_steps);
    s += fmt::format(" (global batch {}) on {}\n", report.chosen->global_batch(), report.chosen->machine);
  }
  const std::string currency = report.price ? report.price->currency : "USD";
  if (report.measured) {
    const auto& m = *report.measured;
    const bool whole = records::measured_whole_job(report);
    s += "  time: " + format_duration(m.time_s) + (whole ? " measured" : " so far");
    if (report.predicted) {
      s += ", " + format_duration(report.predicted->time_s) + " predicted at the plan" +
           (whole ? " (" + signed_percent((report.predicted->time_s - m.time_s) / m.time_s) + ")" : " for the whole job");
    }
    s += "\n";
    s += fmt::format("  cost: {:.4f} {} {}", m.cost, currency, whole ? "measured" : "so far");
    if (report.predicted) s += fmt::format(", {:.4f} {} predicted", report.predicted->cost, currency);
    s += "\n";
  }
  s += fmt::format("  profile and pilot: {} of the job\n", common::percent(report.phases.profiling_share));
  if (report.phases.queue_s > 0) {
    s += "  waiting in the cluster's queue: " + format_duration(report.phases.queue_s) + "\n";
  }
  for (const auto& e : report.remaining_error) {
    s += fmt::format("  predicted time left at {}% of the run: {} off", static_cast<int>(100 * e.fraction),
                     signed_percent(e.error));
    if (e.predicted_range) {
      const bool within = e.predicted_range->holds(e.measured_remaining_s);
      s += fmt::format(", {} its {:.0f}% range ({})", within ? "within" : "outside", 100 * records::kRemainingRangeLevel,
                       range_text(*e.predicted_range));
    }
    s += "\n";
  }
  size_t applied = 0;
  for (const auto& r : report.replans) applied += r.applied ? 1 : 0;
  s += fmt::format("  re-plans: {} applied, {} declined\n", applied, report.replans.size() - applied);
  if (!report.job.out_dir.empty()) s += fmt::format("  report: {}/report.html (and report.json)", report.job.out_dir);
  return s;
}

}  // namespace tula::tune
