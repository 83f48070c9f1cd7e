// `tula profile --time-budget SECONDS`: what the profiler plans to measure, a
// rough estimate of how long that takes (from the anchor step, the first thing
// it times), and the cuts that bring the plan within the budget. Cuts never go
// below what the fits need (predict/profile.hpp kMin*Points): a budget too
// small for that is exceeded, and said so. No LibTorch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tula::profile {

// Step time against the batch, from one timed step: t(b) = t_a (f + (1 - f) b /
// b_a), a fixed share f of the anchor's time plus a part linear in the batch.
// Rough on purpose: it decides how much to measure, never what is fitted.
struct StepEstimate {
  int64_t batch = 1;
  double seconds = 0;
  double fixed_share = 0.1;
  double at(int64_t b) const;
};

struct ProfilePlan {
  std::vector<int64_t> batches;        // the compute grid, as planned
  int warmup = 0, repeats = 0;         // of each compute batch
  int anchor_steps = 0;                // warm-up + repeats of one anchor
  double max_step_s = 0;               // the automatic grid stops after a slower step (0: no such stop)
  std::vector<int64_t> workers;        // communication runs, one per worker count
  std::vector<int64_t> overlap_batches;  // per-worker batches of the DDP steps in each run
  int overlap_steps = 0;               // warm-up + timed DDP steps per batch
  double evaluation_s = 0;             // the evaluation trial's own budget
};

struct PlanEstimate {
  double anchors_s = 0, compute_s = 0, evaluation_s = 0, communication_s = 0;
  double total() const { return anchors_s + compute_s + evaluation_s + communication_s; }
};

// Seconds a worker run spends besides its DDP steps (starting its rank
// threads, building the model in each, the rendezvous and the allreduce
// trials' small messages), whatever the model: 0.2-0.4 s on this 2-core
// machine (3 to 5 s while the ranks were processes, each loading LibTorch).
inline constexpr double kWorkerRunOverheadS = 0.3;

// One compute batch: warm-up, repeats and the metered step, each a step plus
// its optimizer update (taken as 20% more).
double compute_batch_seconds(const ProfilePlan& plan, const StepEstimate& step, int64_t batch);
// The grid without the batches after the first predicted slower than max_step_s.
std::vector<int64_t> expected_grid(const ProfilePlan& plan, const StepEstimate& step);
PlanEstimate estimate(const ProfilePlan& plan, const StepEstimate& step);
// What comes after the compute grid (evaluation and communication).
double after_compute_seconds(const ProfilePlan& plan, const StepEstimate& step);

// Cuts `plan` until its estimate fits `budget_s`, in this order (least lost
// first): extra worker counts (the largest first; one run stays), DDP steps at
// a second batch, compute repeats down to 3, warm-up down to 1, the largest
// batches (kMinComputePoints stay), repeats down to 2. Returns one line per
// cut; empty when the plan fit as it was.
std::vector<std::string> fit_to_budget(ProfilePlan& plan, const StepEstimate& step, double budget_s);

// "batches 4,16,64,256; 1 warm-up + 3 repeats; workers 2" for the log.
std::string describe(const ProfilePlan& plan);

}  // namespace tula::profile
