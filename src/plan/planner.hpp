// The planner API: enumerate configurations over a price catalog, predict
// time-to-accuracy and cost of each, take the Pareto front, find its knee,
// pick by objective and explain the pick. `tula plan` is this plus output:
//
//   auto profile = tula::predict::load_profile("p.json");
//   auto catalog = tula::plan::load_catalog("catalog.json");
//   tula::plan::Planner planner(profile, catalog);
//   auto plan = planner.plan(tula::plan::parse_objective("deadline=2"));
//   std::cout << tula::plan::format_table(plan);             // report.hpp
//   write_file("plan.json", tula::plan::to_json(plan).dump(2));
//   write_file("plan.svg", tula::plan::render_svg(plan));      // svg.hpp
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/batch_cap.hpp"
#include "plan/catalog.hpp"
#include "plan/objective.hpp"
#include "plan/space.hpp"
#include "predict/predictor.hpp"

namespace tula::plan {

// One evaluated configuration (at the fitted parameters).
struct Candidate {
  uint32_t machine = 0;  // index into the catalog
  predict::Config config;  // its global batch: config.global_batch()
  double time_s = 0;  // to the target accuracy (or for the fixed epochs)
  double cost = 0;
  double iteration_s = 0;
  double compute_s = 0;
  double exposed_comm_s = 0;
  double input_wait_s = 0;  // per micro-batch: what the step waits for its input beyond compute
  double steps = 0;
};

// A configuration the knee is weighed against (plan/knee.hpp: the runner-up by time x cost).
struct KneeVariant {
  std::string name;
  std::optional<size_t> candidate;  // index into Plan::candidates
  double time_change = 0;           // relative to the knee
  double cost_change = 0;
};
struct KneeSensitivity {
  std::vector<KneeVariant> variants;
  bool stable = true;     // the runner-up's time x cost lies clearly (beyond the models' error) above the knee's
  std::string statement;  // one or two sentences for people
};

// The configurations the planner considered, and of them those it left out.
struct SpaceCounts {
  int64_t enumerated = 0;
  int64_t over_memory = 0;          // per-worker batch above the memory limit
  int64_t outside_batch_range = 0;  // global batch outside [min, max] (max: batch_cap's where it has one)
};

// What a plan was asked for.
struct PlanGoal {
  Objective objective;
  bool to_target = false;
  double target_accuracy = 0;
  double epochs = 0;  // when !to_target
};

// What a plan says in words about its choice.
struct PlanNotes {
  std::string limit;                 // what limits the chosen configuration most, in a word or two
  std::string explanation;           // a paragraph
  std::vector<std::string> skipped;  // machine types (or parts) left out, and why
  std::vector<std::string> assumptions;
};

struct Plan {
  PlanGoal goal;
  std::string model, dataset;  // from the profile, for titles
  std::string currency = "USD";
  std::vector<MachineType> machines;
  std::vector<Candidate> candidates;  // every feasible configuration evaluated
  std::vector<size_t> front;          // indices into candidates, fastest first
  size_t knee = 0;                    // index into candidates
  bool knee_detected = true;          // false: the front is a single configuration
  KneeSensitivity sensitivity;
  size_t chosen = 0;                  // index into candidates
  predict::Prediction chosen_prediction;  // with intervals
  std::vector<predict::Interval> front_time, front_cost;  // intervals along the front
  PlanNotes notes;
  SpaceCounts counts;                 // configurations considered, and those left out
  BatchCap batch_cap;                 // for fixed epochs: the chosen machine type's (none: max_global_batch 0)
  double seconds = 0;                 // planning time

  const Candidate& chosen_candidate() const { return candidates[chosen]; }
};

struct PlannerOptions {
  SpaceOptions space;
  predict::PredictorOptions predictor;
};

class Planner {
 public:
  // One profile per device. Each machine type is planned from a profile of
  // its own device, else of its kind, else any the catalog's speeds relate it
  // to (device_speed.hpp), or skipped, saying why. catalog() holds the types
  // with their speeds resolved against the profile each is planned from.
  Planner(const std::vector<predict::Profile>& profiles, Catalog catalog, PlannerOptions options = {});
  Planner(const predict::Profile& profile, Catalog catalog, PlannerOptions options = {});

  // Throws predict::InfeasibleError when nothing is feasible or the objective
  // (deadline, budget) cannot be met.
  Plan plan(const Objective& objective) const;

  // Evaluate the whole space only (no front, no intervals): the benchmark's
  // unit of work. Returns the number of feasible configurations.
  size_t evaluate_space(std::vector<Candidate>& out) const;

  const Catalog& catalog() const { return catalog_; }
  // Throws std::out_of_range saying why when the machine type is not planned.
  const predict::Predictor& predictor_for(size_t machine) const;

 private:
  void enumerate(std::vector<Candidate>& out, SpaceCounts& counts) const;

  Catalog catalog_;
  PlannerOptions options_;
  std::vector<predict::Predictor> predictors_;
  std::vector<BatchCap> batch_caps_;    // per predictor (batch_cap.hpp)
  std::vector<int> machine_predictor_;  // per machine: index into predictors_, or -1
  std::vector<std::string> skip_reason_;  // per machine: why it is not planned ("" when it is)
  std::vector<std::string> skipped_;
  int64_t train_samples_ = 0;
  std::string model_, dataset_;
};

}  // namespace tula::plan
