#include "tune/watch.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "common/text.hpp"
#include "plan/knee.hpp"
#include "plan/single_node.hpp"
#include "predict/error.hpp"

namespace tula::tune {

namespace {

bool same_config(const predict::Config& a, const predict::Config& b) {
  return a.nodes == b.nodes && a.workers_per_node == b.workers_per_node && a.batch_per_worker == b.batch_per_worker &&
         a.accumulation_steps == b.accumulation_steps;
}

using common::percent;

WatchDecision stop(WatchDecision d, std::string why) {
  d.action = WatchAction::Stop;
  d.reason = std::move(why);
  return d;
}

// The measurements against the models at this watch.
records::TimelinePoint timeline_point(const Replan& r, const RunningJob& job, const JobClock& clock, double remaining,
                                      std::optional<records::SecondsRange> remaining_range, double iteration_predicted,
                                      bool to_target) {
  const auto& view = r.view;
  records::TimelinePoint p;
  p.t_s = clock.now_s;
  p.step = view.steps_done;
  p.epoch = view.samples_done / job.train_samples;
  p.global_batch = job.config.global_batch();
  p.workers = job.config.workers();
  p.iteration_s = view.iteration_s;
  p.iteration_s_predicted = iteration_predicted;
  if (view.b_noise > 0) p.b_noise = view.b_noise;
  p.predicted_total_s = clock.now_s + remaining;
  p.predicted_remaining_s = remaining;
  p.predicted_remaining_range = remaining_range;
  p.cost_so_far = clock.spent;
  p.test_accuracy = job.test_accuracy;
  if (to_target) p.target_min_steps = view.target_min_steps;
  p.forecast = view.forecast.note;
  if (!view.loss_forecast.note.empty()) p.forecast += "; " + view.loss_forecast.note;
  return p;
}

// Epochs as people read them: three significant digits.
std::string epochs_text(double epochs) { return common::format_number(epochs, 3); }

}  // namespace

bool resize_pays(plan::Objective::Kind kind, double margin, double remaining, double remaining_next, double restart_s,
                 double cost_now, double cost_next) {
  const double time_saving = remaining - remaining_next - restart_s;
  const double cost_saving = cost_now - cost_next;
  switch (kind) {
    case plan::Objective::Kind::Fastest:
    case plan::Objective::Kind::Deadline:
      return time_saving > margin * remaining;
    case plan::Objective::Kind::Cheapest:
    case plan::Objective::Kind::Budget:
      return cost_saving > margin * cost_now;
    case plan::Objective::Kind::Knee:
      return (time_saving > margin * remaining || cost_saving > margin * cost_now) &&
             plan::time_cost_product({remaining_next + restart_s, cost_next}) <
                 plan::time_cost_product({remaining, cost_now});
  }
  return false;
}

double cost_of(const plan::Catalog& catalog, size_t machine, const predict::Config& config, double seconds) {
  return seconds / 3600.0 * static_cast<double>(config.nodes) * catalog.machines.at(machine).spec.price_per_hour;
}

plan::Objective remaining_objective(const plan::Objective& whole, double fraction, const JobClock& clock) {
  auto objective = whole;
  fraction = std::max(fraction, 1e-6);
  if (objective.kind == plan::Objective::Kind::Deadline) {
    objective.limit = (objective.limit - clock.now_s - clock.restart_cost_s) / fraction;
  } else if (objective.kind == plan::Objective::Kind::Budget) {
    objective.limit = (objective.limit - clock.spent) / fraction;
  }
  return objective;
}

TargetOutlook judge_target(const AccuracyForecast& f, const TargetProgress& at, const WatchPolicy& policy) {
  if (!f.fit) return {};
  const auto epoch_at = [&](double min_steps) {
    return at.epochs_done + std::max(0.0, min_steps - at.min_steps_done) * at.epochs_per_min_step;
  };
  const double horizon = at.min_steps_done + std::max(0.0, policy.max_epochs - at.epochs_done) / at.epochs_per_min_step;
  const std::string budget = "--max-epochs " + epochs_text(policy.max_epochs);

  std::string words = f.target_min_steps ? "target forecast at epoch " + epochs_text(epoch_at(*f.target_min_steps))
                                         : "no crossing forecast (the fitted error is not falling)";
  if (!f.has_interval()) return {false, words + "; too few evaluations for an interval"};
  const auto earliest = f.earliest_within_interval(policy.target_accuracy, horizon);
  const bool point_within = f.target_min_steps && epoch_at(*f.target_min_steps) <= policy.max_epochs;
  if (point_within) {
    return {false, words + (earliest ? ", possibly by epoch " + epochs_text(epoch_at(*earliest)) : "") +
                       " (95% interval)"};
  }
  if (earliest) {
    return {false, "forecast uncertain: " + words + ", beyond " + budget + ", but possibly by epoch " +
                       epochs_text(epoch_at(*earliest)) + " (95% interval); the job goes on"};
  }
  words += ", beyond " + budget + " even at the edge of its 95% interval";
  const double needed = policy.give_up_after * policy.max_epochs;
  if (at.epochs_done < needed) {
    return {false, words + "; too early to give up (epoch " + epochs_text(at.epochs_done) + " of at least " +
                       epochs_text(needed) + ")"};
  }
  if (!f.flattened) return {false, words + "; the accuracy is still improving, so the job goes on"};
  return {true, "the target " + percent(policy.target_accuracy) + " is out of reach within " + budget +
                    ": the accuracy stopped improving at " + percent(at.best_accuracy) +
                    " and the forecast's 95% interval does not reach the target by then (" + f.note + ")"};
}

Replan replan_remainder(const Refit& refit, const JobMetrics& metrics, const RunningJob& running,
                        const plan::Catalog& catalog, const plan::Objective& whole, const JobClock& clock,
                        NodeChoice nodes) {
  Replan r;
  r.view = refit.view(metrics);
  const predict::Profile p = refit.profile_with(r.view, running.config, catalog.machines.at(running.machine).spec);
  // The job's own noise scale: a fixed-epoch plan holds its batch to it (plan/batch_cap.hpp).
  plan::SpaceOptions space;
  space.b_noise = r.view.b_noise_read;
  try {
    const auto& planner = r.planner.emplace(
        nodes == NodeChoice::One ? plan::single_node_planner(p, catalog, refit.predictor_options(), {}, space)
                                 : plan::multi_node_planner(p, catalog, refit.predictor_options(), space));
    const auto objective = remaining_objective(whole, refit.remaining_fraction(r.view), clock);
    if (objective.limited() && objective.limit <= 0) {
      r.infeasible = objective.kind == plan::Objective::Kind::Deadline ? "the deadline has passed" : "the budget is spent";
      return r;
    }
    r.plan = planner.plan(objective);
  } catch (const predict::InfeasibleError& e) {
    r.infeasible = e.what();
  } catch (const predict::FitError& e) {
    r.fit_error = e.what();
  }
  return r;
}

WatchPolicy WatchPolicy::from(const TuneOptions& o) {
  WatchPolicy p;
  p.objective = plan::parse_objective(o.job.objective);
  p.to_target = o.to_target();
  p.target_accuracy = o.job.target_accuracy;
  p.max_epochs = o.watch.max_epochs;
  p.give_up_after = o.watch.give_up_after;
  p.stop_when_out_of_reach = o.watch.on_out_of_reach == "stop";
  p.replan = o.watch.replan;
  p.min_saving = o.watch.min_saving;
  return p;
}

std::optional<records::ReplanRecord> weigh_move(const Replan& r, const RunningJob& job, const JobClock& clock,
                                                const Refit& refit, const plan::Catalog& catalog,
                                                const predict::Predictor& prior, double min_saving) {
  const auto& view = r.view;
  const auto& best = r.plan->chosen_candidate();
  if (best.machine == job.machine && same_config(best.config, job.config)) return std::nullopt;
  const auto& machine = catalog.machines.at(job.machine).spec;
  const auto& predictor = r.planner->predictor_for(job.machine);
  const double remaining = refit.remaining_seconds(view, job.config, predictor, machine);
  const double iteration_planned = prior.point(job.config, machine).iteration_s;
  const auto& next_machine = catalog.machines.at(best.machine).spec;
  const double remaining_next =
      refit.remaining_seconds(view, best.config, r.planner->predictor_for(best.machine), next_machine);
  const double cost_now = cost_of(catalog, job.machine, job.config, remaining);
  const double cost_next = cost_of(catalog, best.machine, best.config, remaining_next + clock.restart_cost_s);
  const plan::TimeCost stay{remaining, cost_now}, move{remaining_next + clock.restart_cost_s, cost_next};
  const bool pays = resize_pays(r.plan->goal.objective.kind, min_saving, remaining, remaining_next,
                                clock.restart_cost_s, cost_now, cost_next);
  const std::string product_words = r.plan->goal.objective.kind == plan::Objective::Kind::Knee
                                        ? fmt::format("; time x cost of what is left there {:.3g}x staying's",
                                                      plan::time_cost_product(move) / plan::time_cost_product(stay))
                                        : "";

  std::string reason;
  if (view.iteration_s) {
    reason = fmt::format("measured step {:.3g} s against {:.3g} s planned; ", *view.iteration_s, iteration_planned);
  }
  reason += fmt::format(
      "B_noise {:.3g} ({}); the {} is now {}: {:.3g} s left there against {:.3g} s here, a restart "
      "costs {:.3g} s{}",
      view.b_noise, view.b_noise_source, plan::describe(r.plan->goal.objective), describe_config(best.config),
      remaining_next, remaining, clock.restart_cost_s, product_words);

  records::ReplanRecord entry;
  entry.t_s = clock.now_s;
  entry.step = view.steps_done;
  entry.from = placed(catalog, job.machine, job.config);
  entry.to = placed(catalog, best.machine, best.config);
  entry.reason = reason;
  entry.predicted_saving_s = remaining - remaining_next - clock.restart_cost_s;
  entry.predicted_saving_cost = cost_now - cost_next;
  entry.restart_cost_s = clock.restart_cost_s;
  entry.applied = pays;
  entry.numbers.b_noise = view.b_noise;
  entry.numbers.iteration_s_measured = view.iteration_s;
  entry.numbers.iteration_s_planned = iteration_planned;
  entry.numbers.compute_scale = predictor.compute_scale();
  entry.numbers.remaining_s_here = remaining;
  entry.numbers.remaining_s_there = remaining_next;
  entry.numbers.remaining_fraction = refit.remaining_fraction(view);
  return entry;
}

WatchDecision decide_watch(const Replan& r, const RunningJob& job, const JobClock& clock, const Refit& refit,
                           const plan::Catalog& catalog, const predict::Predictor& prior, const WatchPolicy& policy) {
  const auto& view = r.view;
  const auto& machine = catalog.machines.at(job.machine).spec;
  const auto& predictor = r.planner->predictor_for(job.machine);
  const double remaining = refit.remaining_seconds(view, job.config, predictor, machine);
  const double iteration_planned = prior.point(job.config, machine).iteration_s;
  WatchDecision d;
  d.point = timeline_point(r, job, clock, remaining, refit.remaining_range(view, job.config, predictor, machine),
                           iteration_planned, policy.to_target);

  if (policy.to_target) {
    const double batch = static_cast<double>(job.config.global_batch());
    const TargetProgress at{view.samples_done / job.train_samples, view.min_steps_done,
                            refit.steps_per_min_step(batch, view.b_noise) * batch / job.train_samples, view.best_accuracy.value_or(0)};
    const auto outlook = judge_target(view.forecast, at, policy);
    d.point.outlook = outlook.words;
    if (outlook.out_of_reach) {
      d.give_up = records::GiveUpRecord{clock.now_s, view.steps_done, view.samples_done / job.train_samples,
                                        view.best_accuracy.value_or(0), outlook.words, policy.stop_when_out_of_reach};
      if (policy.stop_when_out_of_reach) return stop(std::move(d), outlook.words);
    }
  }
  if (!r.infeasible.empty()) {
    return stop(std::move(d), plan::describe(policy.objective) + " can no longer be met: " + r.infeasible);
  }
  if (!policy.replan || !r.plan) return d;

  auto move = weigh_move(r, job, clock, refit, catalog, prior, policy.min_saving);
  if (!move) return d;
  d.replan = std::move(*move);
  if (d.replan->applied) {
    const auto& best = r.plan->chosen_candidate();
    d.action = WatchAction::Resize;
    d.reason = d.replan->reason;
    d.next = best.config;
    d.next_machine = best.machine;
  }
  return d;
}

records::PlacedConfig placed(const plan::Catalog& catalog, size_t machine, const predict::Config& c) {
  return {catalog.machines.at(machine).spec.name, c};
}

std::string describe_config(const predict::Config& c) {
  std::string s = fmt::format("{} worker{} x {}", c.workers(), c.workers() == 1 ? "" : "s", c.batch_per_worker);
  if (c.accumulation_steps > 1) s += fmt::format(" x {} accumulated", c.accumulation_steps);
  s += fmt::format(" (global batch {})", c.global_batch());
  return s;
}

}  // namespace tula::tune
