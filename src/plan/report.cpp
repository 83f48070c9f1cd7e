#include "plan/report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "common/text.hpp"
#include "predict/report.hpp"

namespace tula::plan {

using common::format_money;
using common::format_number;
using common::format_seconds;

namespace {

std::vector<std::string> marks_of(const Plan& plan, size_t candidate) {
  std::vector<std::string> m;
  if (candidate == plan.front.front()) m.push_back("fastest");
  if (candidate == plan.front.back()) m.push_back("cheapest");
  if (candidate == plan.knee) m.push_back("knee");
  if (candidate == plan.chosen) m.push_back("chosen");
  return m;
}

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

// Wraps text at `width` columns, indenting continuation lines.
std::string wrap(const std::string& text, size_t width, const std::string& indent = "") {
  std::istringstream words(text);
  std::string word, line, out;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = indent;
    }
    line += (line.empty() || line == indent ? "" : " ") + word;
  }
  if (!line.empty()) out += line + "\n";
  return out;
}

// null where the plan has none (to a target, or a space taken as given).
nlohmann::json batch_cap_json(const BatchCap& cap) {
  if (cap.max_global_batch <= 0) return nullptr;
  return {{"max_global_batch", cap.max_global_batch}, {"basis", cap.basis}, {"reason", cap.reason}};
}

}  // namespace

std::string format_table(const Plan& plan, size_t max_rows) {
  std::string o =
      fmt::format("Plan ({}): {} configurations enumerated, {} feasible, {} on the time/cost front; planned in {}\n",
                  describe(plan.goal.objective), plan.counts.enumerated, plan.candidates.size(), plan.front.size(),
                  format_seconds(plan.seconds));
  if (plan.goal.to_target) {
    o += fmt::format("Time is to {}% test accuracy.\n\n", format_number(100 * plan.goal.target_accuracy, 3));
  } else {
    // Fixed epochs: asked for (--epochs), or the profile has no statistical model.
    o += fmt::format("Time is for {} epoch(s), not to a target accuracy.\n\n", format_number(plan.goal.epochs, 3));
  }

  // Rows: evenly spaced along the front, plus every marked one.
  std::set<size_t> rows;
  const size_t n = plan.front.size();
  const size_t want = std::max<size_t>(max_rows, 4);
  for (size_t i = 0; i < std::min(n, want); ++i) rows.insert(n <= want ? i : i * (n - 1) / (want - 1));
  for (size_t i = 0; i < n; ++i) {
    if (!marks_of(plan, plan.front[i]).empty()) rows.insert(i);
  }
  // One layout for the header and the rows: # right, machine left, the numbers right.
  constexpr auto kRow = "{:>4}  {:<18}{:>6}{:>8}{:>7}{:>6}{:>8}{:>12}{:>12}{:>12}  {}{}\n";
  o += fmt::format(kRow, "#", "machine", "nodes", "w/node", "batch", "accum", "global", "iteration", "time", "cost", "",
                   "");
  for (size_t i : rows) {
    const auto& c = plan.candidates[plan.front[i]];
    const auto marks = marks_of(plan, plan.front[i]);
    o += fmt::format(kRow, i + 1, plan.machines[c.machine].spec.name.substr(0, 17), c.config.nodes,
                     c.config.workers_per_node, c.config.batch_per_worker, c.config.accumulation_steps, c.config.global_batch(),
                     format_seconds(c.iteration_s), format_seconds(c.time_s), format_money(c.cost),
                     plan.front[i] == plan.chosen ? "* " : "", joined(marks, ", "));
  }
  if (rows.size() < n) o += fmt::format("  ({} more front configurations in the JSON output)\n", n - rows.size());
  o += "\n" + predict::format_prediction(plan.chosen_prediction) + "\n";
  o += wrap(plan.notes.explanation, 100) + "\n";
  o += wrap("Knee: " + plan.sensitivity.statement, 100) + "\n";
  for (const auto& s : plan.notes.skipped) o += wrap("Skipped: " + s, 100, "  ");
  o += "Assumptions:\n";
  for (const auto& a : plan.notes.assumptions) o += wrap("- " + a, 100, "  ");
  return o;
}

nlohmann::json to_json(const Plan& plan) {
  using nlohmann::json;
  auto candidate_json = [&](size_t idx) {
    const auto& c = plan.candidates[idx];
    return json{{"machine", plan.machines[c.machine].spec.name},
                {"nodes", c.config.nodes},
                {"workers_per_node", c.config.workers_per_node},
                {"batch_per_worker", c.config.batch_per_worker},
                {"accumulation_steps", c.config.accumulation_steps},
                {"global_batch", c.config.global_batch()},
                {"iteration_s", c.iteration_s},
                {"steps", c.steps},
                {"time_s", c.time_s},
                {"cost", c.cost},
                {"marks", marks_of(plan, idx)}};
  };
  json front = json::array();
  for (size_t i = 0; i < plan.front.size(); ++i) {
    auto row = candidate_json(plan.front[i]);
    row["time_interval"] = predict::to_json(plan.front_time[i]);
    row["cost_interval"] = predict::to_json(plan.front_cost[i]);
    front.push_back(row);
  }
  // Envelope per global batch: the best any configuration does at that batch.
  std::map<int64_t, std::pair<double, double>> env;
  for (const auto& c : plan.candidates) {
    auto [it, fresh] = env.try_emplace(c.config.global_batch(), c.time_s, c.cost);
    if (!fresh) {
      it->second.first = std::min(it->second.first, c.time_s);
      it->second.second = std::min(it->second.second, c.cost);
    }
  }
  json envelope = json::array();
  for (const auto& [b, tc] : env) envelope.push_back({{"global_batch", b}, {"fastest_time_s", tc.first}, {"lowest_cost", tc.second}});
  json variants = json::array();
  for (const auto& v : plan.sensitivity.variants) {
    json e = {{"name", v.name}, {"time_change", v.time_change}, {"cost_change", v.cost_change}};
    if (v.candidate) e["configuration"] = candidate_json(*v.candidate);
    variants.push_back(e);
  }
  // Every feasible configuration's (time, cost), evenly thinned to at most
  // 2000 and rounded to 4 significant digits: the cloud behind the front in
  // a chart drawn from this JSON (the tune report).
  auto round4 = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", v);
    return std::strtod(buf, nullptr);
  };
  const size_t stride = std::max<size_t>(1, (plan.candidates.size() + 1999) / 2000);
  json cloud = json::array();
  for (size_t i = 0; i < plan.candidates.size(); i += stride) {
    cloud.push_back(json::array({round4(plan.candidates[i].time_s), round4(plan.candidates[i].cost)}));
  }
  return {{"objective", to_string(plan.goal.objective)},
          {"currency", plan.currency},
          {"to_target", plan.goal.to_target},
          {"target_accuracy", plan.goal.target_accuracy},
          {"epochs", plan.goal.epochs},
          {"enumerated", plan.counts.enumerated},
          {"feasible", plan.candidates.size()},
          {"over_memory", plan.counts.over_memory},
          {"outside_batch_range", plan.counts.outside_batch_range},
          {"batch_cap", batch_cap_json(plan.batch_cap)},
          {"planning_seconds", plan.seconds},
          {"front", front},
          {"knee", candidate_json(plan.knee)},
          {"knee_detected", plan.knee_detected},
          {"knee_sensitivity",
           {{"stable", plan.sensitivity.stable}, {"statement", plan.sensitivity.statement}, {"variants", variants}}},
          {"chosen", predict::to_json(plan.chosen_prediction)},
          {"limit", plan.notes.limit},
          {"explanation", plan.notes.explanation},
          {"by_global_batch", envelope},
          {"skipped", plan.notes.skipped},
          {"assumptions", plan.notes.assumptions},
          {"candidates", {{"columns", json::array({"time_s", "cost"})}, {"stride", stride}, {"rows", cloud}}}};
}

}  // namespace tula::plan
