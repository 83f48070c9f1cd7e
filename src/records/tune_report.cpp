#include "records/tune_report.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "records/record_error.hpp"

namespace tula::records {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

template <typename T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

// j[key] as T; absent or null keeps `out` as it is.
template <typename T>
void read(const json& j, const char* key, T& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  out = it->get<T>();
}

template <typename T>
void read(const json& j, const char* key, std::optional<T>& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  out = it->get<T>();
}

// j[key] when it is an object or array; null otherwise.
const json& part(const json& j, const char* key) {
  static const json null_value;
  const auto it = j.find(key);
  return it == j.end() ? null_value : *it;
}

void read(const json& j, const char* key, std::optional<SecondsRange>& out) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_array() || it->size() != 2) {
    throw RecordError(fmt::format("'{}' must be [low, high] seconds, got {}", key, it->dump()));
  }
  out = SecondsRange{(*it)[0].get<double>(), (*it)[1].get<double>()};
}

PlacedConfig placed_from(const json& j) {
  PlacedConfig c;
  read(j, "machine", c.machine);
  c.config = layout_from_json(j);
  return c;
}

json to_json(const ReportJob& j) {
  return {{"model", j.model},
          {"dataset", j.dataset},
          {"objective", j.objective},
          {"objective_text", j.objective_text},
          {"resources", j.resources},
          {"backend", j.backend},
          {"optimizer", j.optimizer},
          {"target_accuracy", optional_json(j.target_accuracy)},
          {"epochs", optional_json(j.epochs)},
          {"out_dir", j.out_dir},
          {"started", j.started},
          {"finished", optional_json(j.finished)}};
}

ReportJob job_from(const json& j) {
  ReportJob o;
  read(j, "model", o.model);
  read(j, "dataset", o.dataset);
  read(j, "objective", o.objective);
  read(j, "objective_text", o.objective_text);
  read(j, "resources", o.resources);
  read(j, "backend", o.backend);
  read(j, "optimizer", o.optimizer);
  read(j, "target_accuracy", o.target_accuracy);
  read(j, "epochs", o.epochs);
  read(j, "out_dir", o.out_dir);
  read(j, "started", o.started);
  read(j, "finished", o.finished);
  return o;
}

json to_json(const ReportPhases& p) {
  json j = {{"profile_s", p.profile_s}, {"pilot_s", p.pilot_s},   {"train_s", p.train_s},
            {"restart_s", p.restart_s}, {"total_s", p.total_s}, {"profiling_share", p.profiling_share}};
  if (p.queue_s > 0) j["queue_s"] = p.queue_s;  // a job that never queued writes what it always wrote
  return j;
}

ReportPhases phases_from(const json& j) {
  ReportPhases p;
  read(j, "profile_s", p.profile_s);
  read(j, "pilot_s", p.pilot_s);
  read(j, "train_s", p.train_s);
  read(j, "restart_s", p.restart_s);
  read(j, "queue_s", p.queue_s);
  read(j, "total_s", p.total_s);
  read(j, "profiling_share", p.profiling_share);
  return p;
}

json to_json(const ReportPrice& p) { return {{"currency", p.currency}, {"per_hour", p.per_hour}, {"basis", p.basis}}; }

ReportPrice price_from(const json& j) {
  ReportPrice p;
  read(j, "currency", p.currency);
  read(j, "per_hour", p.per_hour);
  read(j, "basis", p.basis);
  return p;
}

json to_json(const ReportPrediction& p) {
  json j = {{"time_s", p.time_s}, {"cost", p.cost}, {"at", p.at}, {"b_noise", p.b_noise}, {"b_noise_source", p.b_noise_source}};
  if (p.b_noise_pilot) j["b_noise_pilot"] = *p.b_noise_pilot;
  return j;
}

ReportPrediction prediction_from(const json& j) {
  ReportPrediction p;
  read(j, "time_s", p.time_s);
  read(j, "cost", p.cost);
  read(j, "at", p.at);
  read(j, "b_noise", p.b_noise);
  read(j, "b_noise_source", p.b_noise_source);
  read(j, "b_noise_pilot", p.b_noise_pilot);
  return p;
}

json to_json(const ReportMeasured& m) {
  json j = {{"time_s", m.time_s},
          {"cost", m.cost},
          {"final_accuracy", optional_json(m.final_accuracy)},
          {"best_accuracy", optional_json(m.best_accuracy)},
          {"steps", m.steps},
          {"epochs", m.epochs},
          {"restarts", m.restarts},
          {"retries", m.retries}};
  if (m.evaluated_on) j["evaluated_on"] = *m.evaluated_on;
  return j;
}

ReportMeasured measured_from(const json& j) {
  ReportMeasured m;
  read(j, "time_s", m.time_s);
  read(j, "cost", m.cost);
  read(j, "final_accuracy", m.final_accuracy);
  read(j, "best_accuracy", m.best_accuracy);
  read(j, "evaluated_on", m.evaluated_on);
  read(j, "steps", m.steps);
  read(j, "epochs", m.epochs);
  read(j, "restarts", m.restarts);
  read(j, "retries", m.retries);
  return m;
}

TimelinePoint point_from(const json& j) {
  TimelinePoint p;
  read(j, "t_s", p.t_s);
  read(j, "step", p.step);
  read(j, "epoch", p.epoch);
  read(j, "global_batch", p.global_batch);
  read(j, "workers", p.workers);
  read(j, "iteration_s", p.iteration_s);
  read(j, "iteration_s_predicted", p.iteration_s_predicted);
  read(j, "b_noise", p.b_noise);
  read(j, "predicted_total_s", p.predicted_total_s);
  read(j, "predicted_remaining_s", p.predicted_remaining_s);
  read(j, "predicted_remaining_range_s", p.predicted_remaining_range);
  read(j, "cost_so_far", p.cost_so_far);
  read(j, "test_accuracy", p.test_accuracy);
  read(j, "target_min_steps", p.target_min_steps);
  read(j, "forecast", p.forecast);
  read(j, "outlook", p.outlook);
  return p;
}

GiveUpRecord give_up_from(const json& j) {
  GiveUpRecord g;
  read(j, "t_s", g.t_s);
  read(j, "step", g.step);
  read(j, "epoch", g.epoch);
  read(j, "best_accuracy", g.best_accuracy);
  read(j, "reason", g.reason);
  read(j, "acted", g.acted);
  return g;
}

ScheduleSegmentRecord schedule_segment_from(const json& j) {
  ScheduleSegmentRecord s;
  read(j, "from_min_steps", s.from_min_steps);
  read(j, "to_min_steps", s.to_min_steps);
  if (part(j, "config").is_object()) s.config = placed_from(j.at("config"));
  read(j, "b_noise", s.b_noise);
  read(j, "time_s", s.time_s);
  read(j, "cost", s.cost);
  return s;
}

json to_json(const ReportEvaluation& e) {
  return {{"t_s", e.t_s}, {"step", e.step}, {"epoch", e.epoch}, {"test_accuracy", e.test_accuracy}, {"test_loss", e.test_loss}};
}

ReportEvaluation evaluation_from(const json& j) {
  ReportEvaluation e;
  read(j, "t_s", e.t_s);
  read(j, "step", e.step);
  read(j, "epoch", e.epoch);
  read(j, "test_accuracy", e.test_accuracy);
  read(j, "test_loss", e.test_loss);
  return e;
}

ReplanRecord replan_from(const json& j) {
  ReplanRecord r;
  read(j, "t_s", r.t_s);
  read(j, "step", r.step);
  r.from = placed_from(j.at("from"));
  r.to = placed_from(j.at("to"));
  read(j, "reason", r.reason);
  read(j, "predicted_saving_s", r.predicted_saving_s);
  read(j, "predicted_saving_cost", r.predicted_saving_cost);
  read(j, "restart_cost_s", r.restart_cost_s);
  read(j, "applied", r.applied);
  const json& n = part(j, "numbers");
  if (n.is_object()) {
    read(n, "b_noise", r.numbers.b_noise);
    read(n, "iteration_s_measured", r.numbers.iteration_s_measured);
    read(n, "iteration_s_planned", r.numbers.iteration_s_planned);
    read(n, "compute_scale", r.numbers.compute_scale);
    read(n, "remaining_s_here", r.numbers.remaining_s_here);
    read(n, "remaining_s_there", r.numbers.remaining_s_there);
    read(n, "remaining_fraction", r.numbers.remaining_fraction);
  }
  return r;
}

json to_json(const SegmentRecord& s) {
  json j = {{"start_t_s", s.start_t_s}, {"config", to_json(s.config)}, {"first_step", s.first_step},
            {"label", s.label},         {"where", s.where}};
  if (s.end_t_s) j["end_t_s"] = *s.end_t_s;
  if (s.last_step) j["last_step"] = *s.last_step;
  if (!s.exit.empty()) j["exit"] = s.exit;
  if (s.queued_s) {
    j["queued_s"] = *s.queued_s;
    j["queue_billed"] = s.queue_billed;
  }
  return j;
}

SegmentRecord segment_from(const json& j) {
  SegmentRecord s;
  read(j, "start_t_s", s.start_t_s);
  read(j, "end_t_s", s.end_t_s);
  s.config = placed_from(j.at("config"));
  read(j, "first_step", s.first_step);
  read(j, "last_step", s.last_step);
  read(j, "label", s.label);
  read(j, "where", s.where);
  read(j, "exit", s.exit);
  read(j, "queued_s", s.queued_s);
  read(j, "queue_billed", s.queue_billed);
  return s;
}

json to_json(const RemainingError& e) {
  json j = {{"fraction", e.fraction},
            {"t_s", e.t_s},
            {"predicted_remaining_s", e.predicted_remaining_s},
            {"measured_remaining_s", e.measured_remaining_s},
            {"error", e.error}};
  // Written where the watch had a range (reports before had none).
  if (e.predicted_range) {
    j["predicted_range_s"] = to_json(*e.predicted_range);
    j["within_range"] = e.predicted_range->holds(e.measured_remaining_s);
  }
  return j;
}

RemainingError remaining_error_from(const json& j) {
  RemainingError e;
  read(j, "fraction", e.fraction);
  read(j, "t_s", e.t_s);
  read(j, "predicted_remaining_s", e.predicted_remaining_s);
  read(j, "measured_remaining_s", e.measured_remaining_s);
  read(j, "error", e.error);
  read(j, "predicted_range_s", e.predicted_range);
  return e;
}

template <typename T>
json array_of(const std::vector<T>& items) {
  json out = json::array();
  for (const auto& i : items) out.push_back(to_json(i));
  return out;
}

template <typename F>
auto vector_from(const json& j, const char* key, F from) {
  std::vector<decltype(from(json()))> out;
  const json& a = part(j, key);
  if (!a.is_array()) return out;
  for (const auto& item : a) out.push_back(from(item));
  return out;
}

std::string report_path(const std::string& dir) { return (fs::path(dir) / "report.json").string(); }

}  // namespace

json to_json(const PlacedConfig& c) {
  json j = to_json(c.config);
  j["machine"] = c.machine;
  j["global_batch"] = c.global_batch();
  return j;
}

json to_json(const SecondsRange& r) { return json::array({r.low_s, r.high_s}); }

json to_json(const TimelinePoint& p) {
  json j = {{"t_s", p.t_s},
          {"step", p.step},
          {"epoch", p.epoch},
          {"global_batch", p.global_batch},
          {"workers", p.workers},
          {"iteration_s", optional_json(p.iteration_s)},
          {"iteration_s_predicted", p.iteration_s_predicted},
          {"b_noise", optional_json(p.b_noise)},
          {"predicted_total_s", p.predicted_total_s},
          {"predicted_remaining_s", p.predicted_remaining_s},
          {"cost_so_far", p.cost_so_far},
          {"test_accuracy", optional_json(p.test_accuracy)},
          {"target_min_steps", optional_json(p.target_min_steps)},
          {"forecast", p.forecast}};
  if (p.predicted_remaining_range) j["predicted_remaining_range_s"] = to_json(*p.predicted_remaining_range);
  if (!p.outlook.empty()) j["outlook"] = p.outlook;
  return j;
}

json to_json(const ScheduleSegmentRecord& s) {
  return {{"from_min_steps", s.from_min_steps}, {"to_min_steps", s.to_min_steps}, {"config", to_json(s.config)},
          {"b_noise", s.b_noise}, {"time_s", s.time_s}, {"cost", s.cost}};
}

json to_json(const GiveUpRecord& g) {
  return {{"t_s", g.t_s},     {"step", g.step},     {"epoch", g.epoch}, {"best_accuracy", g.best_accuracy},
          {"reason", g.reason}, {"acted", g.acted}};
}

json to_json(const ReplanRecord& r) {
  return {{"t_s", r.t_s},
          {"step", r.step},
          {"from", to_json(r.from)},
          {"to", to_json(r.to)},
          {"reason", r.reason},
          {"predicted_saving_s", r.predicted_saving_s},
          {"predicted_saving_cost", r.predicted_saving_cost},
          {"restart_cost_s", r.restart_cost_s},
          {"applied", r.applied},
          {"numbers",
           {{"b_noise", r.numbers.b_noise},
            {"iteration_s_measured", optional_json(r.numbers.iteration_s_measured)},
            {"iteration_s_planned", r.numbers.iteration_s_planned},
            {"compute_scale", r.numbers.compute_scale},
            {"remaining_s_here", r.numbers.remaining_s_here},
            {"remaining_s_there", r.numbers.remaining_s_there},
            {"remaining_fraction", r.numbers.remaining_fraction}}}};
}

json to_json(const TuneReport& r) {
  json j = {{"format", kTuneReportFormat},
            {"version", kTuneReportVersion},
            {"state", r.state},
            {"reason", r.reason},
            {"job", to_json(r.job)},
            {"phases", to_json(r.phases)},
            {"plan", r.plan},
            {"chosen", r.chosen ? to_json(*r.chosen) : json(nullptr)},
            {"predicted", r.predicted ? to_json(*r.predicted) : json(nullptr)},
            {"measured", r.measured ? to_json(*r.measured) : json(nullptr)},
            {"timeline", array_of(r.timeline)},
            {"evaluations", array_of(r.evaluations)},
            {"replans", array_of(r.replans)},
            {"segments", array_of(r.segments)},
            {"remaining_error", array_of(r.remaining_error)},
            {"notes", r.notes}};
  if (r.price) j["price"] = to_json(*r.price);
  if (r.exit_code) j["exit_code"] = *r.exit_code;
  if (r.give_up) j["give_up"] = to_json(*r.give_up);
  if (!r.schedule.empty()) j["schedule"] = array_of(r.schedule);
  return j;
}

TimelinePoint timeline_point_from_json(const json& j) {
  if (!j.is_object()) throw RecordError("a timeline point must be an object, got " + j.dump());
  try {
    return point_from(j);
  } catch (const json::exception& e) {
    throw RecordError(std::string("timeline point: ") + e.what());
  }
}

TuneReport tune_report_from_json(const json& j) {
  if (!j.is_object() || j.value("format", "") != kTuneReportFormat) {
    throw RecordError(std::string("not a tula tune report (format ") + kTuneReportFormat + ")");
  }
  if (j.value("version", 0) != kTuneReportVersion) {
    throw RecordError(fmt::format("a tune report of version {}, not {}", j.value("version", json(nullptr)).dump(),
                                  kTuneReportVersion));
  }
  const char* at = "state";
  try {
    TuneReport r;
    const std::string state = j.value("state", "running");
    const auto outcome = tune_outcome_from_string(state);
    if (!outcome) throw RecordError("\"" + state + "\" is not a tune outcome");
    r.state = *outcome;
    at = "reason";
    read(j, "reason", r.reason);
    at = "exit_code";
    read(j, "exit_code", r.exit_code);
    at = "job";
    if (part(j, "job").is_object()) r.job = job_from(j.at("job"));
    at = "phases";
    if (part(j, "phases").is_object()) r.phases = phases_from(j.at("phases"));
    at = "price";
    if (part(j, "price").is_object()) r.price = price_from(j.at("price"));
    at = "plan";
    r.plan = part(j, "plan");
    at = "chosen";
    if (part(j, "chosen").is_object()) r.chosen = placed_from(j.at("chosen"));
    at = "predicted";
    if (part(j, "predicted").is_object()) r.predicted = prediction_from(j.at("predicted"));
    at = "measured";
    if (part(j, "measured").is_object()) r.measured = measured_from(j.at("measured"));
    at = "timeline";
    r.timeline = vector_from(j, "timeline", point_from);
    at = "evaluations";
    r.evaluations = vector_from(j, "evaluations", evaluation_from);
    at = "replans";
    r.replans = vector_from(j, "replans", replan_from);
    at = "give_up";
    if (part(j, "give_up").is_object()) r.give_up = give_up_from(j.at("give_up"));
    at = "schedule";
    r.schedule = vector_from(j, "schedule", schedule_segment_from);
    at = "segments";
    r.segments = vector_from(j, "segments", segment_from);
    at = "remaining_error";
    r.remaining_error = vector_from(j, "remaining_error", remaining_error_from);
    at = "notes";
    read(j, "notes", r.notes);
    return r;
  } catch (const json::exception& e) {
    throw RecordError(std::string(at) + ": " + e.what());
  } catch (const RecordError& e) {
    throw RecordError(std::string(at) + ": " + e.what());
  }
}

void write_tune_report(const std::string& dir, const TuneReport& report) {
  common::write_file_atomically(report_path(dir), to_json(report).dump(2) + "\n");
}

std::optional<TuneReport> read_tune_report(const std::string& dir) {
  const std::string path = report_path(dir);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  try {
    return tune_report_from_json(json::parse(in));
  } catch (const json::exception& e) {
    throw RecordError(path + " is not readable JSON (" + e.what() + ")");
  } catch (const RecordError& e) {
    throw RecordError(path + ": " + e.what());
  }
}

}  // namespace tula::records
