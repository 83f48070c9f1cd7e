#include "tune/batch_schedule_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "plan/knee.hpp"

namespace tula::tune {
namespace {

struct Placed {
  size_t machine = 0;
  predict::Config config;
};

bool same(const Placed& a, const Placed& b) {
  return a.machine == b.machine && a.config == b.config;
}

double price_of(const plan::Catalog& catalog, const Placed& p, double seconds) {
  return cost_of(catalog, p.machine, p.config, seconds);
}

ScheduleSegment segment(const Replan& r, const Refit& refit, const plan::Catalog& catalog, const Placed& at,
                        double from, double to) {
  ScheduleSegment s;
  s.from_min_steps = from;
  s.to_min_steps = to;
  s.machine = at.machine;
  s.config = at.config;
  s.b_noise = refit.mean_b_noise(r.view, from, to);
  s.time_s = refit.segment_seconds(to - from, s.b_noise, r.view, at.config, r.planner->predictor_for(at.machine),
                                   catalog.machines.at(at.machine).spec);
  s.cost = price_of(catalog, at, s.time_s);
  return s;
}

// What the planner's rule picks for the progress [from, to] among the plan's candidates.
Placed best_for(const Replan& r, const Refit& refit, const plan::Catalog& catalog, double from, double to) {
  std::vector<plan::TimeCost> points;
  for (const auto& c : r.plan->candidates) {
    const auto s = segment(r, refit, catalog, {c.machine, c.config}, from, to);
    points.push_back({s.time_s, s.cost});
  }
  const auto choice = plan::choose_on_front(points, r.plan->goal.objective, catalog.currency);
  const auto& chosen = r.plan->candidates.at(choice.front.at(choice.chosen));
  return {chosen.machine, chosen.config};
}

}  // namespace

BatchSchedulePlan plan_batch_schedule(const Replan& r, const Refit& refit, const plan::Catalog& catalog,
                                      const JobClock& clock, double min_saving, size_t machine,
                                      const predict::Config& config) {
  BatchSchedulePlan out;
  if (!r.plan || !r.planner) return out;
  const Placed first{machine, config};
  const double from = r.view.min_steps_done, to = r.view.target_min_steps;
  const auto fixed = segment(r, refit, catalog, first, from, to);
  out.segments = {fixed};
  out.time_s = out.fixed_time_s = fixed.time_s;
  out.cost = out.fixed_cost = fixed.cost;
  if (to <= from || r.view.b_noise_read <= 0 || r.plan->goal.objective.limited()) {
    out.explanation = "one configuration to the end (no schedule considered: " +
                      std::string(to <= from ? "no progress left" : r.view.b_noise_read <= 0 ? "no noise scale read"
                                                                                             : "a deadline or budget") +
                      ")";
    return out;
  }
  double best_gain = 0;
  std::string considered;
  for (const double share : kScheduleSplits) {
    const double split = from + share * (to - from);
    const auto rest = best_for(r, refit, catalog, split, to);
    if (same(rest, first)) continue;
    const auto one = segment(r, refit, catalog, first, from, split);
    const auto two = segment(r, refit, catalog, rest, split, to);
    const double restart = clock.restart_cost_s;
    const double time = one.time_s + restart + two.time_s;
    const double cost = one.cost + price_of(catalog, rest, restart) + two.cost;
    considered += fmt::format("{}{:.0f}% in: {} ({:.0f} s, {:.4g} {})", considered.empty() ? "" : "; ", 100 * share,
                              describe_config(rest.config), time, cost, catalog.currency);
    if (!resize_pays(r.plan->goal.objective.kind, min_saving, fixed.time_s, one.time_s + two.time_s, restart,
                     fixed.cost, cost)) {
      continue;
    }
    // The share saved on the side the objective counts (the knee: either side).
    const double time_gain = 1 - time / fixed.time_s, cost_gain = 1 - cost / std::max(1e-12, fixed.cost);
    const auto kind = r.plan->goal.objective.kind;
    const double gain = kind == plan::Objective::Kind::Fastest    ? time_gain
                        : kind == plan::Objective::Kind::Cheapest ? cost_gain
                                                                  : std::max(time_gain, cost_gain);
    if (gain > best_gain) {
      best_gain = gain;
      out.segments = {one, two};
      out.time_s = time;
      out.cost = cost;
    }
  }
  const std::string fixed_words = fmt::format("{} to the end: {:.0f} s, {:.4g} {}", describe_config(first.config),
                                              fixed.time_s, fixed.cost, catalog.currency);
  if (out.segments.size() == 1) {
    out.explanation = considered.empty()
                          ? "one configuration to the end: the rest of the job is best where it starts (" +
                                fixed_words + ")"
                          : "one configuration to the end (" + fixed_words + "); a move did not pay by --min-saving: " +
                                considered;
  } else {
    out.explanation = fmt::format("a schedule: {} to {:.0f}% of the progress, then {} ({:.0f} s, {:.4g} {} with the "
                                  "restart) against {}",
                                  describe_config(first.config),
                                  100 * (out.segments[1].from_min_steps - from) / (to - from),
                                  describe_config(out.segments[1].config), out.time_s, out.cost, catalog.currency,
                                  fixed_words);
  }
  return out;
}

const records::ScheduleSegmentRecord* schedule_move_due(const std::vector<records::ScheduleSegmentRecord>& schedule,
                                                        const records::PlacedConfig& here, const JobView& view) {
  if (schedule.size() < 2 || view.target_min_steps <= 0) return nullptr;
  if (here != schedule[0].config) return nullptr;
  const double split = schedule[1].from_min_steps / std::max(1e-9, schedule.back().to_min_steps);
  return view.min_steps_done / view.target_min_steps >= split ? &schedule[1] : nullptr;
}

}  // namespace tula::tune
