#include "service/job_view.hpp"

namespace tula::service {

using nlohmann::json;

namespace {

// A reference, not a copy: a report's timeline and plan are large, and a
// read of a job must stay cheap under load.
const json& field(const json* report, const char* key) {
  static const json null_value;
  if (!report || !report->is_object()) return null_value;
  const auto it = report->find(key);
  return it == report->end() ? null_value : *it;
}

json number_or_null(const json& object, const char* key) {
  if (!object.is_object() || !object.contains(key) || !object.at(key).is_number()) return nullptr;
  return object.at(key);
}

// Where the job is: steps, epochs, accuracy, time and what is left.
json progress(const json* report) {
  const json& measured = field(report, "measured");
  const json& timeline = field(report, "timeline");
  json out = {{"steps", number_or_null(measured, "steps")},
              {"epochs", number_or_null(measured, "epochs")},
              {"best_accuracy", number_or_null(measured, "best_accuracy")},
              {"final_accuracy", number_or_null(measured, "final_accuracy")},
              {"elapsed_s", number_or_null(measured, "time_s")},
              {"cost_so_far", number_or_null(measured, "cost")},
              {"predicted_remaining_s", nullptr},
              {"fraction", nullptr}};
  if (timeline.is_array() && !timeline.empty()) {
    const json& last = timeline.back();
    out["predicted_remaining_s"] = number_or_null(last, "predicted_remaining_s");
    const json total = number_or_null(last, "predicted_total_s");
    const json t = number_or_null(last, "t_s");
    if (total.is_number() && t.is_number() && total.get<double>() > 0) {
      out["fraction"] = std::min(1.0, t.get<double>() / total.get<double>());
    }
  }
  if (field(report, "state") == "succeeded") out["fraction"] = 1.0;
  return out;
}

// The plan's prediction at the start, the latest one, and what was measured.
json predicted_vs_measured(const json* report) {
  const json& predicted = field(report, "predicted");
  const json& measured = field(report, "measured");
  const json& timeline = field(report, "timeline");
  json latest = nullptr;
  if (timeline.is_array() && !timeline.empty()) latest = number_or_null(timeline.back(), "predicted_total_s");
  json out = {{"predicted_time_s", number_or_null(predicted, "time_s")},
              {"predicted_cost", number_or_null(predicted, "cost")},
              {"latest_predicted_time_s", latest},
              {"measured_time_s", number_or_null(measured, "time_s")},
              {"measured_cost", number_or_null(measured, "cost")},
              {"time_error", nullptr}};
  if (field(report, "state") == "succeeded" && out["predicted_time_s"].is_number() && out["measured_time_s"].is_number()) {
    out["time_error"] = out["predicted_time_s"].get<double>() / out["measured_time_s"].get<double>() - 1;
  }
  return out;
}

json links(int64_t id) {
  const std::string base = "/v1/jobs/" + std::to_string(id);
  return {{"self", base},
          {"plan", base + "/plan"},
          {"metrics", base + "/metrics"},
          {"events", base + "/events"},
          {"cancel", base + "/cancel"},
          {"page", "/jobs/" + std::to_string(id)}};
}

}  // namespace

json job_summary(const JobRecord& job, const json* report) {
  return {{"id", job.id},
          {"state", job.state},
          {"reason", job.reason},
          {"model", job.spec.value("model", "small_cnn")},
          {"dataset", job.spec.value("dataset", "fashion-mnist")},
          {"objective", job.spec.value("objective", "knee")},
          {"target_accuracy", job.spec.contains("target_accuracy") ? job.spec["target_accuracy"] : json(nullptr)},
          {"epochs", job.spec.contains("epochs") ? job.spec["epochs"] : json(nullptr)},
          {"created_at", job.created_at},
          {"finished_at", job.finished_at ? json(*job.finished_at) : json(nullptr)},
          {"progress", progress(report)},
          {"links", links(job.id)}};
}

json job_detail(const JobRecord& job, const json* report, const json& transitions, const json& attempts) {
  json out = job_summary(job, report);
  out["spec"] = job.spec;
  out["updated_at"] = job.updated_at;
  out["started_at"] = job.started_at ? json(*job.started_at) : json(nullptr);
  out["cancel_requested"] = job.cancel_requested;
  out["attempts"] = attempts;
  out["transitions"] = transitions;
  const json& phases = field(report, "phases");
  const json& predicted = field(report, "predicted");
  out["profile"] = {{"profile_s", number_or_null(phases, "profile_s")},
                    {"pilot_s", number_or_null(phases, "pilot_s")},
                    {"b_noise", number_or_null(predicted, "b_noise")},
                    {"b_noise_source", predicted.is_object() ? predicted.value("b_noise_source", json(nullptr)) : json(nullptr)}};
  out["chosen"] = field(report, "chosen");
  out["predicted_vs_measured"] = predicted_vs_measured(report);
  const json& replans = field(report, "replans");
  out["replans"] = replans.is_array() ? replans : json::array();
  out["report_state"] = field(report, "state");
  return out;
}

}  // namespace tula::service
