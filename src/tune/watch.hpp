// A watch of a running tune job, as pure functions of what it measured and
// the models: re-plan what is left (replan_remainder), then decide whether
// to go on, resize or stop (decide_watch). The runner calls them every K
// steps and acts on the decision; the tests call them on recorded metrics.
// No LibTorch here.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "plan/catalog.hpp"
#include "plan/objective.hpp"
#include "plan/pareto.hpp"
#include "plan/planner.hpp"
#include "predict/predictor.hpp"
#include "records/tune_report.hpp"
#include "tune/job_metrics.hpp"
#include "tune/refit.hpp"
#include "tune/tune_options.hpp"

namespace tula::tune {

// The remainder of the job planned with the models re-fitted to it.
struct Replan {
  JobView view;
  std::optional<plan::Planner> planner;  // its predictors are the re-fitted models, one per machine type
  std::optional<plan::Plan> plan;        // none when the fit failed or nothing is feasible
  std::string infeasible;                // the deadline or budget cannot be met any more: why
  std::string fit_error;                 // the re-fit failed: why (the plan is then absent)
};

// Where the job stands when it is watched.
struct JobClock {
  double now_s = 0;           // job time
  double spent = 0;           // money so far
  double restart_cost_s = 0;  // what the next restart is expected to take
};

// The objective for what is left: a deadline or budget shrinks by what is
// spent and scales to the remaining share `fraction` of the work, since the
// planner plans whole jobs.
plan::Objective remaining_objective(const plan::Objective& whole, double fraction, const JobClock& clock);

// The running launch.
struct RunningJob {
  size_t machine = 0;  // index into the catalog
  predict::Config config;
  double train_samples = 1;                 // per epoch
  std::optional<double> test_accuracy;      // the latest evaluation
};

// How many nodes a re-plan may choose: one (the local and Slurm backends run
// one node), or up to each machine type's max_nodes (the emulated cluster).
enum class NodeChoice { One, UpToMaxNodes };

// Plans the work still to do from the running configuration on.
Replan replan_remainder(const Refit& refit, const JobMetrics& metrics, const RunningJob& running,
                        const plan::Catalog& catalog, const plan::Objective& whole, const JobClock& clock,
                        NodeChoice nodes = NodeChoice::One);

// What `seconds` on `config`'s nodes of catalog type `machine` cost.
double cost_of(const plan::Catalog& catalog, size_t machine, const predict::Config& config, double seconds);

// Whether moving pays under the objective, net of the restart: a saving
// above the margin on the side the objective counts; for the knee, by the
// knee's own rule (plan/knee.hpp) on what is left to run, a smaller time x
// cost there than here, and a saving above the margin on one side.
bool resize_pays(plan::Objective::Kind kind, double margin, double remaining, double remaining_next, double restart_s,
                 double cost_now, double cost_next);

// What the options say about watching.
struct WatchPolicy {
  plan::Objective objective = plan::Objective::knee();  // for the whole job
  bool to_target = false;
  double target_accuracy = 0;
  double max_epochs = 30;  // toward a target: forecast past this many epochs is out of reach
  double give_up_after = 0.2;  // ... judged only after this share of max_epochs
  bool stop_when_out_of_reach = true;  // false: the verdict is written down and the job goes on
  bool replan = true;      // false: never resize
  double min_saving = 0.10;
  static WatchPolicy from(const TuneOptions& o);
};

// Toward a target: whether it is out of reach within max_epochs, and the
// forecast against that budget in words. Stopping a job on a wrong verdict
// loses everything it cost, so the verdict needs three things at once: the
// forecast's optimistic edge (its 95% interval, not its point) stays short
// of the target by max_epochs, the accuracy has flattened, and give_up_after
// of the budget is done. Until then the job goes on, and the words say how
// uncertain the forecast is.
struct TargetProgress {
  double epochs_done = 0;
  double min_steps_done = 0;
  double epochs_per_min_step = 0;  // at the running configuration: (1 + B_noise / B) B / samples per epoch
  double best_accuracy = 0;
};
struct TargetOutlook {
  bool out_of_reach = false;
  std::string words;  // empty before there is a forecast
};
TargetOutlook judge_target(const AccuracyForecast& forecast, const TargetProgress& at, const WatchPolicy& policy);

enum class WatchAction { Continue, Resize, Stop };

struct WatchDecision {
  WatchAction action = WatchAction::Continue;
  std::string reason;             // Resize and Stop: why, for people
  size_t next_machine = 0;        // Resize
  predict::Config next;           // Resize
  records::TimelinePoint point;   // measured against predicted, for the report's timeline
  std::optional<records::ReplanRecord> replan;  // a better configuration considered: applied (Resize) or declined
  std::optional<records::GiveUpRecord> give_up;  // the target judged out of reach (acted on: Stop)
};

// A move of the running job to the re-plan's choice (its plan and planner
// must be there), weighed with the restart by resize_pays: applied where it pays, declined where
// not; none where the job already runs there. The watch's re-plans and the
// plan made while the pilot's workers run are both this one decision.
std::optional<records::ReplanRecord> weigh_move(const Replan& replan, const RunningJob& job, const JobClock& clock,
                                                const Refit& refit, const plan::Catalog& catalog,
                                                const predict::Predictor& prior, double min_saving);

// Decides from a re-plan (its planner must be there). `prior` is the plan's
// models before any re-fit, against which the step time is compared.
WatchDecision decide_watch(const Replan& replan, const RunningJob& job, const JobClock& clock, const Refit& refit,
                           const plan::Catalog& catalog, const predict::Predictor& prior, const WatchPolicy& policy);

// A configuration on its machine type, as the report writes it.
records::PlacedConfig placed(const plan::Catalog& catalog, size_t machine, const predict::Config& config);
// "2 workers x 16 (global batch 32)".
std::string describe_config(const predict::Config& c);

}  // namespace tula::tune
