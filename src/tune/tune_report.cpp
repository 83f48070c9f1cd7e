#include "tune/tune_report.hpp"

#include <sstream>

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
      out.push_back({fraction, point.t_s, predicted, measured, measured > 0 ? (predicted - measured) / measured : 0.0});
      break;
    }
  }
  return out;
}

using common::signed_percent;

std::string closing_summary(const records::TuneReport& report) {
  std::ostringstream s;
  s << "tune " << records::to_string(report.state) << ": " << report.reason << "\n";
  if (report.chosen) {
    const auto& c = report.chosen->config;
    s << "  configuration chosen: " << c.workers_per_node * c.nodes << " workers x " << c.batch_per_worker;
    if (c.accumulation_steps > 1) s << " x " << c.accumulation_steps;
    s << " (global batch " << report.chosen->global_batch() << ") on " << report.chosen->machine << "\n";
  }
  const std::string currency = report.price ? report.price->currency : "USD";
  if (report.measured) {
    const auto& m = *report.measured;
    s << "  time: " << format_duration(m.time_s);
    if (report.predicted) {
      s << " measured, " << format_duration(report.predicted->time_s) << " predicted at the plan ("
        << signed_percent((report.predicted->time_s - m.time_s) / m.time_s) << ")";
    }
    s << "\n";
    s.setf(std::ios::fixed);
    s.precision(4);
    s << "  cost: " << m.cost << " " << currency << " measured";
    if (report.predicted) s << ", " << report.predicted->cost << " " << currency << " predicted";
    s << "\n";
    s.unsetf(std::ios::fixed);
  }
  s << "  profile and pilot: " << common::percent(report.phases.profiling_share) << " of the job\n";
  for (const auto& e : report.remaining_error) {
    s << "  predicted time left at " << static_cast<int>(100 * e.fraction) << "% of the run: " << signed_percent(e.error)
      << " off\n";
  }
  size_t applied = 0;
  for (const auto& r : report.replans) applied += r.applied ? 1 : 0;
  s << "  re-plans: " << applied << " applied, " << report.replans.size() - applied << " declined\n";
  if (!report.job.out_dir.empty()) s << "  report: " << report.job.out_dir << "/report.html (and report.json)";
  return s.str();
}

}  // namespace tula::tune
