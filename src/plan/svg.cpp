#include "plan/svg.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "common/text.hpp"
#include "render/chart.hpp"

namespace tula::plan {

namespace {

const char* const kCloud = "#9a9a9a";
const char* const kFront = "#1f77b4";
const char* const kKnee = "#d62728";
const char* const kChosen = "#111111";
const char* const kBest = "#555555";

constexpr double kPanelWidth = 440, kPlotHeight = 330;

// What a panel plots of a configuration, on one axis.
using Coordinate = double (*)(const Candidate&);
double batch_of(const Candidate& c) { return static_cast<double>(c.config.global_batch()); }
double time_of(const Candidate& c) { return c.time_s; }
double cost_of(const Candidate& c) { return c.cost; }

// Log axes throughout: batches double, and times and costs span decades.
render::Axis batch_axis() {
  return {"global batch (samples per step)", render::Unit::Batch, "USD", render::ScaleKind::Log};
}
render::Axis time_axis() { return {"time", render::Unit::Seconds, "USD", render::ScaleKind::Log}; }
render::Axis cost_axis(const Plan& plan) { return {"cost", render::Unit::Money, plan.currency, render::ScaleKind::Log}; }

// Every configuration, faint (the chart thins the cloud to a few thousand dots).
render::Series cloud(const Plan& plan, Coordinate x, Coordinate y) {
  render::Series s{"a configuration", {}, kCloud, render::Style::Faint};
  for (const auto& c : plan.candidates) s.points.push_back({x(c), y(c)});
  return s;
}

// Best at each global batch, drawn through the powers of two only: other
// batches (a memory limit of 657, say) are reached by few configurations
// and would make the line zigzag.
render::Series best_per_batch(const Plan& plan, Coordinate y) {
  std::map<int64_t, double> best;
  for (const auto& c : plan.candidates) {
    if ((c.config.global_batch() & (c.config.global_batch() - 1)) != 0) continue;
    auto [it, fresh] = best.try_emplace(c.config.global_batch(), y(c));
    if (!fresh) it->second = std::min(it->second, y(c));
  }
  render::Series s{"best at each global batch", {}, kBest, render::Style::Dashed};
  for (const auto& [b, v] : best) s.points.push_back({static_cast<double>(b), v});
  return s;
}

render::Series front(const Plan& plan, Coordinate x, Coordinate y, std::string name, render::Style style) {
  render::Series s{std::move(name), {}, kFront, style};
  for (size_t i : plan.front) s.points.push_back({x(plan.candidates[i]), y(plan.candidates[i])});
  return s;
}

// The knee ringed; the chosen configuration marked too where it is not the knee.
std::vector<render::Marker> knee_and_choice(const Plan& plan, Coordinate x, Coordinate y) {
  const auto& k = plan.candidates[plan.knee];
  const bool same = plan.knee == plan.chosen;
  std::vector<render::Marker> m{{x(k), y(k), render::Shape::Ring, same ? "knee (chosen)" : "knee", kKnee}};
  if (!same) {
    const auto& c = plan.chosen_candidate();
    m.push_back({x(c), y(c), render::Shape::Diamond, "chosen", kChosen, true});
  }
  return m;
}

render::Chart panel(std::string title, render::Axis x, render::Axis y) {
  render::Chart c;
  c.title = std::move(title);
  c.x = std::move(x);
  c.y = std::move(y);
  c.width = kPanelWidth;
  c.plot_height = kPlotHeight;
  c.empty_text = "no configuration";
  return c;
}

// Time or cost against the global batch: the cloud, the best per batch, the front.
render::Chart against_batch(const Plan& plan, std::string title, render::Axis y, Coordinate value) {
  auto c = panel(std::move(title), batch_axis(), std::move(y));
  c.series = {cloud(plan, batch_of, value), best_per_batch(plan, value),
              front(plan, batch_of, value, "Pareto front", render::Style::Dots)};
  c.markers = knee_and_choice(plan, batch_of, value);
  return c;
}

// The front in the time/cost plane, each point crossed by its predicted
// time and cost intervals.
render::Chart front_panel(const Plan& plan) {
  auto c = panel("Pareto front: cost vs time", time_axis(), cost_axis(plan));
  c.series = {cloud(plan, time_of, cost_of),
              front(plan, time_of, cost_of, "Pareto front (crosses: intervals)", render::Style::LineDots)};
  const size_t crossed = std::min({plan.front.size(), plan.front_time.size(), plan.front_cost.size()});
  for (size_t i = 0; i < crossed; ++i) {
    const auto& f = plan.candidates[plan.front[i]];
    c.intervals.push_back({{plan.front_time[i].lo, f.cost}, {plan.front_time[i].hi, f.cost}, kFront});
    c.intervals.push_back({{f.time_s, plan.front_cost[i].lo}, {f.time_s, plan.front_cost[i].hi}, kFront});
  }
  c.markers = knee_and_choice(plan, time_of, cost_of);
  return c;
}

std::string title_of(const Plan& plan) {
  const std::string what =
      plan.goal.to_target ? "time to " + common::format_number(100 * plan.goal.target_accuracy, 3) + "% test accuracy"
                          : "time for " + common::format_number(plan.goal.epochs, 3) + " epoch(s)";
  return plan.model + " on " + plan.dataset + ": " + what + " and cost; objective: " + describe(plan.goal.objective);
}

// The one-line reading of the choice, under the panels.
std::string chosen_line(const Plan& plan) {
  const auto& ch = plan.chosen_candidate();
  const auto& cfg = ch.config;
  return fmt::format(
      "Chosen ({}): {} x {}, {} worker(s)/node, batch {}{} (global {}): {}, {}; limited by {}",
      describe(plan.goal.objective), cfg.nodes, plan.machines[ch.machine].spec.name, cfg.workers_per_node,
      cfg.batch_per_worker, cfg.accumulation_steps > 1 ? fmt::format(" x {}", cfg.accumulation_steps) : "",
      ch.config.global_batch(), common::format_seconds(ch.time_s), common::format_money(ch.cost), plan.notes.limit);
}

}  // namespace

std::string render_svg(const Plan& plan) {
  if (plan.candidates.empty() || plan.front.empty()) throw std::invalid_argument("svg: empty plan");
  render::Figure f;
  f.title = title_of(plan);
  f.panels = {against_batch(plan, "Time vs global batch", time_axis(), time_of),
              against_batch(plan, "Cost vs global batch", cost_axis(plan), cost_of), front_panel(plan)};
  f.notes = {chosen_line(plan)};
  return render::figure_svg(f);
}

}  // namespace tula::plan
