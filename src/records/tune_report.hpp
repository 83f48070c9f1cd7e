// report.json: what a `tula tune` job chose, predicted and measured, as it
// goes and at its end. One writer (to_json) and one reader
// (tune_report_from_json) for the runner, the service, the CLI and the
// renderers. The plan's own part is the planner's format (plan::to_json), kept
// as JSON here since this part sits below the planner. The format is
// documented in docs/formats.md. No LibTorch here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/states.hpp"
#include "records/tune_state.hpp"

namespace tula::records {

inline constexpr const char* kTuneReportFormat = "tula-tune-report";
inline constexpr int kTuneReportVersion = 1;

// A configuration on a named machine type.
struct PlacedConfig {
  std::string machine;
  common::Layout config;
  int64_t global_batch() const { return config.global_batch(); }
  bool operator==(const PlacedConfig&) const = default;
};

struct ReportJob {
  std::string model, dataset, objective, objective_text, resources, backend, optimizer, out_dir;
  std::optional<double> target_accuracy, epochs;  // exactly one of the two
  std::string started;                            // ISO 8601, UTC
  std::optional<std::string> finished;
};

struct ReportPhases {
  double profile_s = 0, pilot_s = 0, train_s = 0, restart_s = 0, total_s = 0;
  double profiling_share = 0;  // (profile + pilot) / total
  double queue_s = 0;  // launches waiting in the backend's queue for their nodes (not restarts)
};

struct ReportPrice {
  std::string currency = "USD";
  double per_hour = 0;
  std::string basis;
};

// The plan's prediction for the whole job.
struct ReportPrediction {
  double time_s = 0, cost = 0;
  std::string at = "plan";
  double b_noise = 0;               // planned with (the read grown over the job, or as read)
  std::string b_noise_source;
  std::optional<double> b_noise_pilot{};  // the estimator's read before growth; absent in older reports
};

struct ReportMeasured {
  double time_s = 0, cost = 0;
  // final: on the test split at the end; best: on the curve's split (evaluated_on).
  std::optional<double> final_accuracy, best_accuracy;
  // The curve's split: "test", or "validation" (held out of the training
  // set); absent in reports written before jobs had a validation split.
  std::optional<std::string> evaluated_on;
  int64_t steps = 0;
  double epochs = 0;
  int restarts = 0, retries = 0;
};

// A prediction's range of seconds, both ends included.
struct SecondsRange {
  double low_s = 0, high_s = 0;
  bool holds(double seconds) const { return low_s <= seconds && seconds <= high_s; }
};

// The share of where the crossing may lie that a remaining time's range
// spans, centred (tune::Refit::remaining_range).
inline constexpr double kRemainingRangeLevel = 0.8;

// One watch of the running job: measured against predicted.
struct TimelinePoint {
  double t_s = 0;  // job time
  int64_t step = 0;
  double epoch = 0;
  int64_t global_batch = 0, workers = 0;
  std::optional<double> iteration_s;  // measured, recent median
  double iteration_s_predicted = 0;   // the plan's models (before any re-fit)
  std::optional<double> b_noise;
  double predicted_total_s = 0, predicted_remaining_s = 0;
  // Toward a target: the remaining time's range over where the crossing lies
  // (tune::Refit::remaining_range, kRemainingRangeLevel); absent in reports
  // written before.
  std::optional<SecondsRange> predicted_remaining_range;
  double cost_so_far = 0;
  std::optional<double> test_accuracy;
  std::optional<double> target_min_steps;  // toward a target only
  std::string forecast;                    // the accuracy forecast, in words
  std::string outlook;                     // toward a target: the forecast against --max-epochs, in words (written when set)
};

struct ReportEvaluation {
  double t_s = 0;
  int64_t step = 0;
  double epoch = 0, test_accuracy = 0, test_loss = 0;
};

// A re-plan considered at a watch: applied (a resize) or declined.
struct ReplanRecord {
  double t_s = 0;
  int64_t step = 0;
  PlacedConfig from, to;
  std::string reason;
  double predicted_saving_s = 0, predicted_saving_cost = 0, restart_cost_s = 0;
  bool applied = false;
  struct Numbers {
    double b_noise = 0;
    std::optional<double> iteration_s_measured;
    double iteration_s_planned = 0, compute_scale = 1;
    double remaining_s_here = 0, remaining_s_there = 0, remaining_fraction = 1;
  } numbers;
};

// The watch's verdict that the target is out of reach within --max-epochs:
// acted on (the job stopped there) or, with --on-out-of-reach continue, only
// written down, so a run that goes on can check it.
struct GiveUpRecord {
  double t_s = 0;
  int64_t step = 0;
  double epoch = 0;
  double best_accuracy = 0;
  std::string reason;
  bool acted = false;
};

// One launch of the workers.
struct SegmentRecord {
  double start_t_s = 0;
  std::optional<double> end_t_s;
  PlacedConfig config;
  int64_t first_step = 0;
  std::optional<int64_t> last_step;
  std::string label;  // pilot, train
  std::string where;  // the backend's words for where it ran
  std::string exit;   // how it ended, in words
  // Seconds its workers waited in the backend's queue for their nodes
  // (Slurm: submission to start); absent where the launch never queued.
  std::optional<double> queued_s;
  bool queue_billed = false;  // whether that wait was billed (the catalog's queue_wait_billed)
};

// How far the predicted remaining time was off at a share of the run.
struct RemainingError {
  double fraction = 0, t_s = 0, predicted_remaining_s = 0, measured_remaining_s = 0, error = 0;
  std::optional<SecondsRange> predicted_range;  // the watch's, where it had one
};

// A part of a batch schedule the plan made (tune/batch_schedule_plan.hpp):
// this configuration from one progress to another, in minimum steps.
struct ScheduleSegmentRecord {
  double from_min_steps = 0, to_min_steps = 0;
  PlacedConfig config;
  double b_noise = 0;  // its mean over the segment, as planned
  double time_s = 0, cost = 0;
};

struct TuneReport {
  TuneOutcome state = TuneOutcome::Running;
  std::string reason;
  std::optional<int> exit_code;  // what `tula tune` exits with, once it ended
  ReportJob job;
  ReportPhases phases;
  std::optional<ReportPrice> price;
  nlohmann::json plan;  // plan::to_json of the initial plan; null before it (or with --start-at)
  std::optional<PlacedConfig> chosen;
  std::optional<ReportPrediction> predicted;
  std::optional<ReportMeasured> measured;
  std::vector<TimelinePoint> timeline;
  std::vector<ReportEvaluation> evaluations;
  std::vector<ReplanRecord> replans;
  std::optional<GiveUpRecord> give_up;  // the first verdict of out of reach, if any (written when set)
  // The batch schedule planned, when the plan is one (two segments or more; written when set).
  std::vector<ScheduleSegmentRecord> schedule;
  std::vector<SegmentRecord> segments;
  std::vector<RemainingError> remaining_error;
  std::vector<std::string> notes;
};

// Whether `measured` covers the whole job the plan predicted: only a job that
// succeeded ran to its end; a stopped or failed one measured a part of it,
// which is no error of the prediction.
inline bool measured_whole_job(const TuneReport& r) { return r.state == TuneOutcome::Succeeded && r.measured; }

nlohmann::json to_json(const PlacedConfig& c);
nlohmann::json to_json(const SecondsRange& r);  // [low, high]
nlohmann::json to_json(const TimelinePoint& p);
nlohmann::json to_json(const ReplanRecord& r);
nlohmann::json to_json(const GiveUpRecord& g);
nlohmann::json to_json(const ScheduleSegmentRecord& s);
nlohmann::json to_json(const TuneReport& report);

// RecordError naming the field for a document that is not a report or has a
// field of the wrong type. Fields a report gains as the job goes (chosen,
// predicted, measured, ...) may be absent or null.
TuneReport tune_report_from_json(const nlohmann::json& j);

// One timeline point: a report's, or the service's progress event (a point
// less some fields); RecordError when it is not an object or a field has the
// wrong type.
TimelinePoint timeline_point_from_json(const nlohmann::json& j);

// Writes DIR/report.json atomically.
void write_tune_report(const std::string& dir, const TuneReport& report);
// DIR/report.json; nullopt when there is none; RecordError when it is not a report.
std::optional<TuneReport> read_tune_report(const std::string& dir);

}  // namespace tula::records
