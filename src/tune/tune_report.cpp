#include "tune/tune_report.hpp"

#include <cmath>
#include <sstream>

#include "tune/terminal.hpp"

namespace tula::tune {

using nlohmann::json;

json remaining_time_errors(const json& timeline, double end_s) {
  json out = json::array();
  if (!timeline.is_array() || end_s <= 0) return out;
  for (double fraction : {0.25, 0.5, 0.75}) {
    const double at = fraction * end_s;
    for (const auto& point : timeline) {
      const double t = point.value("t_s", 0.0);
      if (t < at || !point.contains("predicted_remaining_s") || !point["predicted_remaining_s"].is_number()) continue;
      const double measured = end_s - t;
      const double predicted = point["predicted_remaining_s"].get<double>();
      out.push_back({{"fraction", fraction},
                     {"t_s", t},
                     {"predicted_remaining_s", predicted},
                     {"measured_remaining_s", measured},
                     {"error", measured > 0 ? (predicted - measured) / measured : 0.0}});
      break;
    }
  }
  return out;
}

namespace {

std::string signed_percent(double x) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << (x >= 0 ? "+" : "") << 100 * x << "%";
  return s.str();
}

double number(const json& j, const char* a, const char* b) {
  if (!j.contains(a) || !j[a].is_object() || !j[a].contains(b) || !j[a][b].is_number()) return NAN;
  return j[a][b].get<double>();
}

}  // namespace

std::string closing_summary(const json& report) {
  std::ostringstream s;
  s << "tune " << report.value("state", "?") << ": " << report.value("reason", "") << "\n";
  if (report.contains("chosen") && report["chosen"].is_object()) {
    const auto& c = report["chosen"];
    s << "  configuration chosen: " << c.value("workers_per_node", 0) * c.value("nodes", 1) << " workers x "
      << c.value("batch_per_worker", 0);
    if (c.value("accumulation_steps", 1) > 1) s << " x " << c.value("accumulation_steps", 1);
    s << " (global batch " << c.value("global_batch", 0) << ") on " << c.value("machine", "?") << "\n";
  }
  const double predicted_time = number(report, "predicted", "time_s");
  const double measured_time = number(report, "measured", "time_s");
  const double predicted_cost = number(report, "predicted", "cost");
  const double measured_cost = number(report, "measured", "cost");
  const std::string currency = report.contains("price") ? report["price"].value("currency", "USD") : "USD";
  s << "  time: " << format_duration(measured_time);
  if (std::isfinite(predicted_time)) {
    s << " measured, " << format_duration(predicted_time) << " predicted at the plan ("
      << signed_percent((predicted_time - measured_time) / measured_time) << ")";
  }
  s << "\n";
  if (std::isfinite(measured_cost)) {
    s.setf(std::ios::fixed);
    s.precision(4);
    s << "  cost: " << measured_cost << " " << currency << " measured";
    if (std::isfinite(predicted_cost)) s << ", " << predicted_cost << " " << currency << " predicted";
    s << "\n";
    s.unsetf(std::ios::fixed);
  }
  const double share = number(report, "phases", "profiling_share");
  if (std::isfinite(share)) s << "  profile and pilot: " << signed_percent(share).substr(1) << " of the job\n";
  for (const auto& e : report.value("remaining_error", json::array())) {
    s << "  predicted time left at " << static_cast<int>(100 * e.value("fraction", 0.0))
      << "% of the run: " << signed_percent(e.value("error", 0.0)) << " off\n";
  }
  int applied = 0;
  for (const auto& r : report.value("replans", json::array())) applied += r.value("applied", false) ? 1 : 0;
  s << "  re-plans: " << applied << " applied, " << report.value("replans", json::array()).size() - applied
    << " declined\n";
  if (report.contains("job")) {
    const std::string dir = report["job"].value("out_dir", "");
    s << "  report: " << dir << "/report.html (and report.json)";
  }
  return s.str();
}

}  // namespace tula::tune
