#include "plan/planner.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "common/stopwatch.hpp"
#include "plan/device_speed.hpp"
#include "plan/explain.hpp"
#include "plan/knee.hpp"
#include "predict/error.hpp"

namespace tula::plan {

Planner::Planner(const predict::Profile& profile, Catalog catalog, PlannerOptions options)
    : Planner(std::vector<predict::Profile>{profile}, std::move(catalog), options) {}

Planner::Planner(const std::vector<predict::Profile>& profiles, Catalog catalog, PlannerOptions options)
    : catalog_(std::move(catalog)), options_(std::move(options)) {
  if (profiles.empty()) throw std::invalid_argument("planner: needs at least one profile");
  train_samples_ = profiles.front().data.train_samples;
  model_ = profiles.front().model.name;
  dataset_ = profiles.front().data.name;
  for (const auto& p : profiles) {
    if (p.model.name != profiles.front().model.name || p.data.name != profiles.front().data.name) {
      throw std::invalid_argument("planner: profiles are of different models or data sets (" + p.model.name + " on " +
                                  p.data.name + " vs " + profiles.front().model.name + " on " +
                                  profiles.front().data.name + ")");
    }
    predictors_.push_back(predict::Predictor::from_profile(p, options_.predictor));
    batch_caps_.push_back(fixed_epochs_batch_cap(predictors_.back(), options_.space, train_samples_));
  }
  const Catalog as_given = catalog_;
  for (auto& m : catalog_.machines) {
    // A profile of the type's own device first, then one of its kind, then
    // any the catalog relates it to (device_speed.hpp).
    std::vector<size_t> order(profiles.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto rank = [&](size_t i) {
      const auto& h = profiles[i].hardware;
      if (!m.spec.accelerator_model.empty() && reference_matches({m.spec.accelerator_model, "", 0}, h)) return 0;
      return h.device.kind == m.spec.device_kind ? 1 : 2;
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rank(a) < rank(b); });
    int which = -1;
    std::string reason;
    for (const size_t i : order) {
      const auto r = resolve_speed(m, as_given, profiles[i]);
      if (r.plannable) {
        which = static_cast<int>(i);
        m = resolved_for(m, r);
        break;
      }
      if (reason.empty()) reason = r.reason;
    }
    if (which < 0) skipped_.push_back(reason);
    machine_predictor_.push_back(which);
    skip_reason_.push_back(which < 0 ? reason : "");
  }
}

const predict::Predictor& Planner::predictor_for(size_t machine) const {
  const int i = machine_predictor_.at(machine);
  if (i < 0) throw std::out_of_range(skip_reason_.at(machine));
  return predictors_[static_cast<size_t>(i)];
}

void Planner::enumerate(std::vector<Candidate>& out, SpaceCounts& counts) const {
  const auto& sp = options_.space;
  const int64_t max_global_uncapped = sp.max_global_batch > 0 ? sp.max_global_batch : train_samples_;
  const std::vector<int64_t> accum = sp.accumulation_steps.empty() ? std::vector<int64_t>{1, 2, 4, 8}
                                                                   : sp.accumulation_steps;
  for (size_t mi = 0; mi < catalog_.machines.size(); ++mi) {
    if (machine_predictor_[mi] < 0) continue;
    const auto& mt = catalog_.machines[mi];
    const auto& pred = predictors_[static_cast<size_t>(machine_predictor_[mi])];
    const int64_t capped = batch_caps_[static_cast<size_t>(machine_predictor_[mi])].max_global_batch;
    const int64_t max_global = capped > 0 ? capped : max_global_uncapped;
    const auto nodes = sp.nodes.empty() ? powers_of_two_upto(mt.max_nodes) : sp.nodes;
    const auto wpns = sp.workers_per_node.empty() ? powers_of_two_upto(mt.spec.max_workers_per_node)
                                                  : sp.workers_per_node;
    for (int64_t wpn : wpns) {
      if (wpn > mt.spec.max_workers_per_node) continue;
      const int64_t b_max = pred.max_batch_per_worker(mt.spec, wpn);
      std::vector<int64_t> batches = sp.batch_per_worker;
      if (batches.empty() && b_max >= 1) {
        batches = powers_of_two_upto(std::min(b_max, sp.max_batch_per_worker), b_max <= sp.max_batch_per_worker);
      }
      for (int64_t n : nodes) {
        if (n > mt.max_nodes) continue;
        for (int64_t b : batches) {
          for (int64_t k : accum) {
            // Accumulation trades steps for memory, so it is planned only at
            // the largest per-worker batch (a careful user accumulates only
            // once that is in use). Below it the compute model, linear in the
            // batch, can tie b x k with one batch of b k, and a tie must not
            // pick micro-batches of 2. A space that lists its batches is taken as given.
            if (k > 1 && sp.batch_per_worker.empty() && b < batches.back()) continue;
            ++counts.enumerated;
            if (b > b_max) {
              ++counts.over_memory;
              continue;
            }
            predict::Config c{n, wpn, b, k};
            const int64_t global = c.global_batch();
            if (global < sp.min_global_batch || global > max_global) {
              ++counts.outside_batch_range;
              continue;
            }
            const auto r = pred.point(c, mt.spec);
            Candidate cand;
            cand.machine = static_cast<uint32_t>(mi);
            cand.config = c;
            cand.time_s = r.time_s;
            cand.cost = r.cost;
            cand.iteration_s = r.iteration_s;
            cand.compute_s = r.compute_s;
            cand.exposed_comm_s = r.exposed_comm_s;
            cand.input_wait_s = r.input_wait_s;
            cand.steps = r.steps;
            out.push_back(cand);
          }
        }
      }
    }
  }
}

size_t Planner::evaluate_space(std::vector<Candidate>& out) const {
  out.clear();
  SpaceCounts counts;
  enumerate(out, counts);
  return out.size();
}

Plan Planner::plan(const Objective& objective) const {
  const auto start = std::chrono::steady_clock::now();
  Plan plan;
  plan.goal.objective = objective;
  plan.model = model_;
  plan.dataset = dataset_;
  plan.currency = catalog_.currency;
  plan.machines = catalog_.machines;
  plan.notes.skipped = skipped_;
  const auto& first = predictors_.front();
  plan.goal.to_target = first.to_target();
  plan.goal.target_accuracy = plan.goal.to_target ? first.models().statistical->target_accuracy : 0.0;
  plan.goal.epochs = plan.goal.to_target ? 0.0 : first.fixed_epochs();

  enumerate(plan.candidates, plan.counts);
  const SpaceCounts& counts = plan.counts;
  for (size_t mi = 0; mi < catalog_.machines.size(); ++mi) {
    if (machine_predictor_[mi] < 0) continue;
    const auto& mt = catalog_.machines[mi];
    if (predictor_for(mi).max_batch_per_worker(mt.spec, 1) < 1) {
      plan.notes.skipped.push_back(mt.spec.name + ": not even a batch of 1 fits its device memory");
    }
  }
  if (plan.candidates.empty()) {
    std::string why = fmt::format(
        "plan: no feasible configuration ({} enumerated, {} over the memory limit, {} outside the global batch range)",
        counts.enumerated, counts.over_memory, counts.outside_batch_range);
    if (batch_caps_.front().max_global_batch > 0) {
      why += "; " + batch_caps_.front().reason + " (a max_global_batch given replaces the cap)";
    }
    for (const auto& s : plan.notes.skipped) why += "; " + s;
    throw predict::InfeasibleError(why);
  }

  std::vector<TimeCost> points;
  points.reserve(plan.candidates.size());
  for (const auto& c : plan.candidates) points.push_back({c.time_s, c.cost});
  const auto choice = choose_on_front(points, objective, catalog_.currency);
  const auto& knee = choice.knee;
  plan.front = choice.front;
  plan.knee = plan.front[knee.index];
  plan.knee_detected = knee.detected;
  plan.sensitivity = knee_sensitivity(choice.front_points, knee.index, plan.front);

  plan.chosen = plan.front[choice.chosen];

  for (size_t i : plan.front) {
    const auto& c = plan.candidates[i];
    const auto [t, cost] = predictor_for(c.machine).time_cost_interval(c.config, catalog_.machines[c.machine].spec);
    plan.front_time.push_back(t);
    plan.front_cost.push_back(cost);
  }
  const auto& chosen = plan.chosen_candidate();
  const auto& pred = predictor_for(chosen.machine);
  plan.chosen_prediction = pred.predict(chosen.config, catalog_.machines[chosen.machine].spec);
  plan.notes.assumptions = pred.assumptions();
  plan.batch_cap = batch_caps_[static_cast<size_t>(machine_predictor_[chosen.machine])];
  const auto why = explain(plan, pred);
  plan.notes.limit = why.limit;
  plan.notes.explanation = why.paragraph;
  plan.seconds = common::since(start);
  return plan;
}

}  // namespace tula::plan
