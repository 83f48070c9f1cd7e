#include "plan/explain.hpp"

#include <cmath>
#include <sstream>

#include "common/text.hpp"

namespace tula::plan {

namespace {

using common::format_bytes;
using common::format_money;
using common::format_number;
using common::format_seconds;

std::string pct(double fraction) { return format_number(100 * fraction, 2) + "%"; }

std::string describe(const Plan& plan, const Candidate& c) {
  std::ostringstream o;
  const auto& cfg = c.config;
  o << cfg.nodes << " x " << plan.machines[c.machine].spec.name << " with " << cfg.workers_per_node << " worker"
    << (cfg.workers_per_node > 1 ? "s" : "") << " each, " << cfg.batch_per_worker << " samples per worker";
  if (cfg.accumulation_steps > 1) o << " x " << cfg.accumulation_steps << " accumulation steps";
  o << " (global batch " << c.global_batch << ")";
  return o.str();
}

// What it is predicted to take and cost.
void chosen_sentence(std::ostringstream& o, const Plan& plan) {
  const auto& c = plan.chosen_candidate();
  const auto& p = plan.chosen_prediction;
  const int level = static_cast<int>(std::lround(100 * p.level));
  o << "Chosen (" << describe(plan.objective) << "): " << describe(plan, c) << ". ";
  if (p.to_target) {
    o << "Predicted time to " << format_number(100 * p.target_accuracy, 3) << "% test accuracy ";
  } else {
    o << "Predicted time for " << format_number(p.epochs.estimate, 3) << " epoch(s) ";
  }
  o << format_seconds(p.time_s.estimate) << " [" << format_seconds(p.time_s.lo) << ", " << format_seconds(p.time_s.hi)
    << "], cost " << format_money(p.cost.estimate) << " [" << format_money(p.cost.lo) << ", " << format_money(p.cost.hi)
    << "] (" << level << "% intervals). ";
}

// Against the ends of the front: the fastest and the cheapest.
void trade_sentences(std::ostringstream& o, const Plan& plan) {
  const auto& c = plan.chosen_candidate();
  const auto& fastest = plan.candidates[plan.front.front()];
  const auto& cheapest = plan.candidates[plan.front.back()];
  if (&c != &fastest) {
    o << "It takes " << format_number(c.time_s / fastest.time_s, 3) << "x the time of the fastest configuration ("
      << format_seconds(fastest.time_s) << ", " << format_money(fastest.cost) << ") for "
      << pct(1 - c.cost / fastest.cost) << " less money";
    o << (&c != &cheapest ? "; " : ". ");
  }
  if (&c != &cheapest) {
    o << (&c != &fastest ? "it" : "It") << " is " << format_number(cheapest.time_s / c.time_s, 3)
      << "x as fast as the cheapest (" << format_seconds(cheapest.time_s) << ", " << format_money(cheapest.cost)
      << ") for " << pct(c.cost / cheapest.cost - 1) << " more money. ";
  }
}

// What the objective asked for: the trade past the knee, the deadline's or the budget's margin.
void objective_sentence(std::ostringstream& o, const Plan& plan) {
  const auto& c = plan.chosen_candidate();
  const auto& p = plan.chosen_prediction;
  if (plan.objective.kind == Objective::Kind::Knee) {
    // The trade just past the knee: what the next faster point on the front costs.
    for (size_t i = 1; i < plan.front.size(); ++i) {
      if (plan.front[i] != plan.chosen) continue;
      const auto& faster = plan.candidates[plan.front[i - 1]];
      o << "Past the knee, the next faster configuration saves " << pct(1 - faster.time_s / c.time_s)
        << " of the time for " << pct(faster.cost / c.cost - 1) << " more money. ";
    }
  } else if (plan.objective.kind == Objective::Kind::Deadline) {
    o << "It meets the " << format_seconds(plan.objective.limit) << " deadline with "
      << pct(1 - c.time_s / plan.objective.limit) << " to spare";
    o << (p.time_s.hi > plan.objective.limit ? ", but the upper end of its interval misses it: leave more margin. "
                                             : ", even at the upper end of its interval. ");
  } else if (plan.objective.kind == Objective::Kind::Budget) {
    o << "It stays within the " << format_money(plan.objective.limit) << " budget with "
      << pct(1 - c.cost / plan.objective.limit) << " to spare";
    o << (p.cost.hi > plan.objective.limit ? ", but the upper end of its interval exceeds it. "
                                           : ", even at the upper end of its interval. ");
  }
}

// True when memory binds the per-worker batch.
bool memory_sentence(std::ostringstream& o, const Plan& plan, const predict::Predictor& pred) {
  const auto& c = plan.chosen_candidate();
  const auto& p = plan.chosen_prediction;
  const auto& cfg = c.config;
  const bool binds = cfg.accumulation_steps > 1 || cfg.batch_per_worker >= p.max_batch_per_worker;
  o << "Memory: " << format_bytes(p.memory_bytes.estimate) << " per worker of "
    << format_bytes(pred.memory_per_worker(plan.machines[c.machine].spec, cfg.workers_per_node)) << "; at most "
    << p.max_batch_per_worker << " samples per worker fit";
  if (cfg.accumulation_steps > 1) {
    o << ", so the global batch is reached with " << cfg.accumulation_steps << " accumulation steps (binding). ";
  } else {
    o << (binds ? " (binding). " : " (not binding). ");
  }
  return binds;
}

// The share of a step that communication leaves exposed.
double communication_sentence(std::ostringstream& o, const Plan& plan, const predict::Predictor& pred) {
  const auto& p = plan.chosen_prediction;
  const double exposed_share = p.iteration_s.estimate > 0 ? p.exposed_comm_s.estimate / p.iteration_s.estimate : 0.0;
  o << "An iteration takes " << format_seconds(p.iteration_s.estimate) << ": "
    << format_seconds(p.compute_s.estimate * plan.chosen_candidate().config.accumulation_steps) << " forward+backward";
  if (p.workers > 1) {
    o << ", and of the " << format_seconds(p.allreduce_s.estimate) << " allreduce of "
      << format_bytes(static_cast<double>(pred.gradient_bytes())) << " over " << p.workers << " workers "
      << format_seconds(p.exposed_comm_s.estimate) << " (" << pct(exposed_share)
      << " of the step) is left exposed after backward. ";
  } else {
    o << "; one worker has nothing to allreduce. ";
  }
  return exposed_share;
}

// Where the loader was timed: how much of a step waits for reading and
// decoding, and whether the input, not compute, bounds it.
// Returns the share of the step spent waiting for input.
double input_sentence(std::ostringstream& o, const Plan& plan, const predict::Predictor& pred) {
  if (!pred.models().input.measured) return 0;
  const auto& p = plan.chosen_prediction;
  const auto& cfg = plan.chosen_candidate().config;
  const double waited = p.input_wait_s.estimate * static_cast<double>(cfg.accumulation_steps);
  const double share = p.iteration_s.estimate > 0 ? waited / p.iteration_s.estimate : 0.0;
  o << "Reading and decoding the input leaves " << format_seconds(waited) << " (" << pct(share)
    << " of the step) waited for";
  if (p.input_wait_s.estimate > p.compute_s.estimate) {
    o << ": the loader, not compute, bounds this step, and more workers on the same cores would not feed it faster. ";
  } else {
    o << ". ";
  }
  return share;
}

// True when the batch is past the noise scale.
bool statistical_sentence(std::ostringstream& o, const Plan& plan, const predict::Predictor& pred) {
  const auto& p = plan.chosen_prediction;
  if (!p.to_target) return false;
  const auto& sm = *pred.models().statistical;
  const double B = static_cast<double>(plan.chosen_candidate().global_batch), bn = sm.b_noise();
  const double steps_over = 1 + bn / B, examples_over = 1 + B / bn;
  const double saved = 1 - (1 + bn / (2 * B)) / steps_over;
  o << "Statistical efficiency: with a gradient noise scale B_noise of " << format_number(bn, 3) << ", batch "
    << plan.chosen_candidate().global_batch << " needs " << format_number(steps_over, 3) << "x the minimum steps and "
    << format_number(examples_over, 3) << "x the minimum examples; doubling the batch would save only " << pct(saved)
    << " of the steps while processing " << pct((1 + 2 * B / bn) / examples_over - 1) << " more examples. ";
  return B >= bn;
}

std::string limit_reason(const std::string& limit) {
  if (limit == "price") return "a larger or faster configuration exists but the objective does not pay for it";
  if (limit == "input") return "the loader cannot prepare batches as fast as the step computes them";
  if (limit == "communication") return "more workers add allreduce time that backward cannot hide";
  if (limit == "statistical efficiency") return "the batch is past the noise scale: more samples per step buy few steps";
  return "the device cannot hold a larger per-worker batch";
}

}  // namespace

Explanation explain(const Plan& plan, const predict::Predictor& pred) {
  Explanation e;
  std::ostringstream o;
  chosen_sentence(o, plan);
  trade_sentences(o, plan);
  objective_sentence(o, plan);
  const bool memory_binds = memory_sentence(o, plan, pred);
  const double exposed_share = communication_sentence(o, plan, pred);
  const double input_share = input_sentence(o, plan, pred);
  const bool statistical_binds = statistical_sentence(o, plan, pred);
  e.limit = memory_binds                                        ? "memory"
            : input_share >= 0.25 && input_share >= exposed_share ? "input"
            : exposed_share >= 0.25                             ? "communication"
            : statistical_binds                                 ? "statistical efficiency"
                                                                : "price";
  o << "What limits it most: " << e.limit << " (" << limit_reason(e.limit) << ").";
  e.paragraph = o.str();
  return e;
}

}  // namespace tula::plan
