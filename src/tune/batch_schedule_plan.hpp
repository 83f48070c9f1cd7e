// The plan as a batch schedule. The gradient noise scale grows as the job
// goes (predict/noise_growth.hpp), so the configuration best for what is left
// can change part of the way in: a larger batch pays more once B_noise has
// grown. At the plan, for each split of the remaining progress, the first
// part runs where the job starts (the plan's choice, or the pilot's
// configuration where its workers go on) and the rest at what the planner's own rule
// (plan::choose_on_front over the same candidates) picks at the rest's mean
// B_noise; the move costs a restart. A schedule is planned when the best
// split pays by the watch's rule (resize_pays: --min-saving, net of the
// restart); else the plan stays one configuration. The runner moves when the
// job's progress reaches the split, if it still runs the first part's
// configuration (an online re-plan in between replaces the schedule).
// No LibTorch here.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "plan/catalog.hpp"
#include "plan/objective.hpp"
#include "predict/predictor.hpp"
#include "records/tune_report.hpp"
#include "tune/refit.hpp"
#include "tune/watch.hpp"

namespace tula::tune {

struct ScheduleSegment {
  double from_min_steps = 0, to_min_steps = 0;  // progress, in minimum steps
  size_t machine = 0;                           // index into the catalog
  predict::Config config;
  double b_noise = 0;  // its mean over the segment
  double time_s = 0, cost = 0;
};

struct BatchSchedulePlan {
  std::vector<ScheduleSegment> segments;  // one: the plan's choice to the end
  double time_s = 0, cost = 0;            // every segment and the restart between them
  double fixed_time_s = 0, fixed_cost = 0;  // the first configuration to the end
  std::string explanation;
};

// The split shares of the remaining progress tried.
inline const std::vector<double> kScheduleSplits = {0.25, 0.5, 0.75};

// From a re-plan with a plan, toward a target (else: one segment where the
// job starts, `machine` and `config`). Deadline and budget objectives keep
// one segment.
BatchSchedulePlan plan_batch_schedule(const Replan& replan, const Refit& refit, const plan::Catalog& catalog,
                                      const JobClock& clock, double min_saving, size_t machine,
                                      const predict::Config& config);

// The planned schedule's next segment when the job, running `here`, is due
// to move to it: it still runs the first segment's configuration (else it
// moved already, or an online re-plan replaced the schedule) and its progress
// reached the split. The minimum-steps axis is rescaled as the noise read and
// the forecast are re-fitted, so the split is compared as a share of the
// progress to the target.
const records::ScheduleSegmentRecord* schedule_move_due(const std::vector<records::ScheduleSegmentRecord>& schedule,
                                                        const records::PlacedConfig& here, const JobView& view);

}  // namespace tula::tune
