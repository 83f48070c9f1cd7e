#include "plan/explain.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::plan {

namespace {

using common::format_bytes;
using common::format_money;
using common::format_number;
using common::format_seconds;

std::string pct(double fraction) { return format_number(100 * fraction, 2) + "%"; }

std::string describe(const Plan& plan, const Candidate& c) {
  const auto& cfg = c.config;
  std::string o = fmt::format("{} x {} with {} worker{} each, {} samples per worker", cfg.nodes,
                              plan.machines[c.machine].spec.name, cfg.workers_per_node,
                              cfg.workers_per_node > 1 ? "s" : "", cfg.batch_per_worker);
  if (cfg.accumulation_steps > 1) o += fmt::format(" x {} accumulation steps", cfg.accumulation_steps);
  o += fmt::format(" (global batch {})", c.config.global_batch());
  return o;
}

// What it is predicted to take and cost.
void chosen_sentence(std::string& o, const Plan& plan) {
  const auto& c = plan.chosen_candidate();
  const auto& p = plan.chosen_prediction;
  const int level = static_cast<int>(std::lround(100 * p.level));
  o += fmt::format("Chosen ({}): {}. ", describe(plan.goal.objective), describe(plan, c));
  if (p.to_target) {
    o += fmt::format("Predicted time to {}% test accuracy ", format_number(100 * p.target_accuracy, 3));
  } else {
    o += fmt::format("Predicted time for {} epoch(s) ", format_number(p.epochs.estimate, 3));
  }
  o += fmt::format("{} [{}, {}], cost {} [{}, {}] ({}% intervals). ", format_seconds(p.time_s.estimate),
                   format_seconds(p.time_s.lo), format_seconds(p.time_s.hi), format_money(p.cost.estimate),
                   format_money(p.cost.lo), format_money(p.cost.hi), level);
}

// Against the ends of the front: the fastest and the cheapest.
void trade_sentences(std::string& o, const Plan& plan) {
  const auto& c = plan.chosen_candidate();
  const auto& fastest = plan.candidates[plan.front.front()];
  const auto& cheapest = plan.candidates[plan.front.back()];
  if (&c != &fastest) {
    o += fmt::format("It takes {}x the time of the fastest configuration ({}, {}) for {} less money",
                     format_number(c.time_s / fastest.time_s, 3), format_seconds(fastest.time_s),
                     format_money(fastest.cost), pct(1 - c.cost / fastest.cost));
    o += (&c != &cheapest ? "; " : ". ");
  }
  if (&c != &cheapest) {
    o += fmt::format("{} is {}x as fast as the cheapest ({}, {}) for {} more money. ", &c != &fastest ? "it" : "It",
                     format_number(cheapest.time_s / c.time_s, 3), format_seconds(cheapest.time_s),
                     format_money(cheapest.cost), pct(c.cost / cheapest.cost - 1));
  }
}

// What the objective asked for: the trade past the knee, the deadline's or the budget's margin.
void objective_sentence(std::string& o, const Plan& plan) {
  const auto& c = plan.chosen_candidate();
  const auto& p = plan.chosen_prediction;
  if (plan.goal.objective.kind == Objective::Kind::Knee) {
    // The trade just past the knee: what the next faster point on the front costs.
    for (size_t i = 1; i < plan.front.size(); ++i) {
      if (plan.front[i] != plan.chosen) continue;
      const auto& faster = plan.candidates[plan.front[i - 1]];
      o += fmt::format("Past the knee, the next faster configuration saves {} of the time for {} more money. ",
                       pct(1 - faster.time_s / c.time_s), pct(faster.cost / c.cost - 1));
    }
  } else if (plan.goal.objective.kind == Objective::Kind::Deadline) {
    o += fmt::format("It meets the {} deadline with {} to spare", format_seconds(plan.goal.objective.limit),
                     pct(1 - c.time_s / plan.goal.objective.limit));
    o += (p.time_s.hi > plan.goal.objective.limit ? ", but the upper end of its interval misses it: leave more margin. "
                                                  : ", even at the upper end of its interval. ");
  } else if (plan.goal.objective.kind == Objective::Kind::Budget) {
    o += fmt::format("It stays within the {} budget with {} to spare", format_money(plan.goal.objective.limit),
                     pct(1 - c.cost / plan.goal.objective.limit));
    o += (p.cost.hi > plan.goal.objective.limit ? ", but the upper end of its interval exceeds it. "
                                                : ", even at the upper end of its interval. ");
  }
}

// True when memory binds the per-worker batch.
bool memory_sentence(std::string& o, const Plan& plan, const predict::Predictor& pred) {
  const auto& c = plan.chosen_candidate();
  const auto& p = plan.chosen_prediction;
  const auto& cfg = c.config;
  const bool binds = cfg.accumulation_steps > 1 || cfg.batch_per_worker >= p.max_batch_per_worker;
  o += fmt::format("Memory: {} per worker of {}; at most {} samples per worker fit",
                   format_bytes(p.memory_bytes.estimate),
                   format_bytes(pred.memory_per_worker(plan.machines[c.machine].spec, cfg.workers_per_node)),
                   p.max_batch_per_worker);
  if (cfg.accumulation_steps > 1) {
    o += fmt::format(", so the global batch is reached with {} accumulation steps (binding). ", cfg.accumulation_steps);
  } else {
    o += (binds ? " (binding). " : " (not binding). ");
  }
  return binds;
}

// The share of a step that communication leaves exposed.
double communication_sentence(std::string& o, const Plan& plan, const predict::Predictor& pred) {
  const auto& p = plan.chosen_prediction;
  const double exposed_share =
      p.per_step.iteration_s.estimate > 0 ? p.per_step.exposed_comm_s.estimate / p.per_step.iteration_s.estimate : 0.0;
  o += fmt::format("An iteration takes {}: {} forward+backward", format_seconds(p.per_step.iteration_s.estimate),
                   format_seconds(p.per_step.compute_s.estimate * plan.chosen_candidate().config.accumulation_steps));
  if (p.workers > 1) {
    o += fmt::format(
        ", and of the {} allreduce of {} over {} workers {} ({} of the step) is left exposed after "
        "backward. ",
        format_seconds(p.per_step.allreduce_s.estimate), format_bytes(static_cast<double>(pred.gradient_bytes())),
        p.workers, format_seconds(p.per_step.exposed_comm_s.estimate), pct(exposed_share));
  } else {
    o += "; one worker has nothing to allreduce. ";
  }
  return exposed_share;
}

// Where the loader was timed: how much of a step waits for reading and
// decoding, and whether the input, not compute, bounds it.
// Returns the share of the step spent waiting for input.
double input_sentence(std::string& o, const Plan& plan, const predict::Predictor& pred) {
  if (!pred.models().input.measured) return 0;
  const auto& p = plan.chosen_prediction;
  const auto& cfg = plan.chosen_candidate().config;
  const double waited = p.per_step.input_wait_s.estimate * static_cast<double>(cfg.accumulation_steps);
  const double share = p.per_step.iteration_s.estimate > 0 ? waited / p.per_step.iteration_s.estimate : 0.0;
  o += fmt::format("Reading and decoding the input leaves {} ({} of the step) waited for", format_seconds(waited),
                   pct(share));
  if (p.per_step.input_wait_s.estimate > p.per_step.compute_s.estimate) {
    o += ": the loader, not compute, bounds this step, and more workers on the same cores would not feed it faster. ";
  } else {
    o += ". ";
  }
  return share;
}

// True when the batch is past the noise scale.
bool statistical_sentence(std::string& o, const Plan& plan, const predict::Predictor& pred) {
  const auto& p = plan.chosen_prediction;
  if (!p.to_target) return false;
  const auto& sm = *pred.models().statistical;
  const double B = static_cast<double>(plan.chosen_candidate().config.global_batch()), bn = sm.b_noise();
  const double steps_over = 1 + bn / B, examples_over = 1 + B / bn;
  const double saved = 1 - (1 + bn / (2 * B)) / steps_over;
  o += fmt::format("Statistical efficiency: with a gradient noise scale B_noise of {}, batch {} needs {}x the minimum "
                   "steps and {}x the minimum examples; doubling the batch would save only {} of the steps while "
                   "processing {} more examples. ",
                   format_number(bn, 3), plan.chosen_candidate().config.global_batch(), format_number(steps_over, 3),
                   format_number(examples_over, 3), pct(saved), pct((1 + 2 * B / bn) / examples_over - 1));
  return B >= bn;
}

// For fixed epochs: the batch cap and why (batch_cap.hpp). True when it
// binds: doubling the chosen global batch would pass it.
bool batch_cap_sentence(std::string& o, const Plan& plan) {
  const auto& cap = plan.batch_cap;
  if (cap.max_global_batch <= 0) return false;
  const bool binds = 2 * plan.chosen_candidate().config.global_batch() > cap.max_global_batch;
  o += cap.reason + (binds ? " (binding). " : " (not binding). ");
  o += "A max_global_batch given (`tula plan --max-global-batch`) replaces the cap. ";
  return binds;
}

std::string limit_reason(const std::string& limit) {
  if (limit == "price") return "a larger or faster configuration exists but the objective does not pay for it";
  if (limit == "input") return "the loader cannot prepare batches as fast as the step computes them";
  if (limit == "communication") return "more workers add allreduce time that backward cannot hide";
  if (limit == "statistical efficiency") return "the batch is past the noise scale: more samples per step buy few steps";
  if (limit == "batch cap") return "with the epochs fixed, a larger batch would leave them too few useful steps";
  return "the device cannot hold a larger per-worker batch";
}

}  // namespace

Explanation explain(const Plan& plan, const predict::Predictor& pred) {
  Explanation e;
  std::string o;
  chosen_sentence(o, plan);
  trade_sentences(o, plan);
  objective_sentence(o, plan);
  const bool memory_binds = memory_sentence(o, plan, pred);
  const double exposed_share = communication_sentence(o, plan, pred);
  const double input_share = input_sentence(o, plan, pred);
  const bool statistical_binds = statistical_sentence(o, plan, pred);
  const bool cap_binds = batch_cap_sentence(o, plan);
  e.limit = memory_binds                                        ? "memory"
            : input_share >= 0.25 && input_share >= exposed_share ? "input"
            : exposed_share >= 0.25                             ? "communication"
            : statistical_binds                                 ? "statistical efficiency"
            : cap_binds                                         ? "batch cap"
                                                                : "price";
  o += fmt::format("What limits it most: {} ({}).", e.limit, limit_reason(e.limit));
  e.paragraph = o;
  return e;
}

}  // namespace tula::plan
