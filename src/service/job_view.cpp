#include "service/job_view.hpp"

namespace tula::service {

using nlohmann::json;

namespace {

template <typename T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

const records::TimelinePoint* latest_point(const records::TuneReport* report) {
  return report && !report->timeline.empty() ? &report->timeline.back() : nullptr;
}

// Where the job is: steps, epochs, accuracy, time and what is left.
json progress(const records::TuneReport* report) {
  const auto* m = report && report->measured ? &*report->measured : nullptr;
  json out = {{"steps", m ? json(m->steps) : json(nullptr)},
              {"epochs", m ? json(m->epochs) : json(nullptr)},
              {"best_accuracy", m ? or_null(m->best_accuracy) : json(nullptr)},
              {"final_accuracy", m ? or_null(m->final_accuracy) : json(nullptr)},
              {"elapsed_s", m ? json(m->time_s) : json(nullptr)},
              {"cost_so_far", m ? json(m->cost) : json(nullptr)},
              {"predicted_remaining_s", nullptr},
              {"predicted_remaining_range_s", nullptr},
              {"fraction", nullptr}};
  if (const auto* last = latest_point(report)) {
    out["predicted_remaining_s"] = last->predicted_remaining_s;
    if (const auto& r = last->predicted_remaining_range) out["predicted_remaining_range_s"] = records::to_json(*r);
    if (last->predicted_total_s > 0) out["fraction"] = std::min(1.0, last->t_s / last->predicted_total_s);
  }
  if (report && report->state == records::TuneOutcome::Succeeded) out["fraction"] = 1.0;
  return out;
}

// The plan's prediction at the start, the latest one, and what was measured.
json predicted_vs_measured(const records::TuneReport* report) {
  const auto* p = report && report->predicted ? &*report->predicted : nullptr;
  const auto* m = report && report->measured ? &*report->measured : nullptr;
  const auto* last = latest_point(report);
  json out = {{"predicted_time_s", p ? json(p->time_s) : json(nullptr)},
              {"predicted_cost", p ? json(p->cost) : json(nullptr)},
              {"latest_predicted_time_s", last ? json(last->predicted_total_s) : json(nullptr)},
              {"measured_time_s", m ? json(m->time_s) : json(nullptr)},
              {"measured_cost", m ? json(m->cost) : json(nullptr)},
              {"time_error", nullptr}};
  if (report && records::measured_whole_job(*report) && p && m->time_s > 0) {
    out["time_error"] = p->time_s / m->time_s - 1;
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

json job_summary(const JobRecord& job, const records::TuneReport* report) {
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

json job_detail(const JobRecord& job, const records::TuneReport* report, const json& transitions, const json& attempts) {
  json out = job_summary(job, report);
  out["spec"] = job.spec;
  out["updated_at"] = job.updated_at;
  out["started_at"] = job.started_at ? json(*job.started_at) : json(nullptr);
  out["cancel_requested"] = job.cancel_requested;
  out["attempts"] = attempts;
  out["transitions"] = transitions;
  const auto* p = report && report->predicted ? &*report->predicted : nullptr;
  out["profile"] = {{"profile_s", report ? json(report->phases.profile_s) : json(nullptr)},
                    {"pilot_s", report ? json(report->phases.pilot_s) : json(nullptr)},
                    {"b_noise", p ? json(p->b_noise) : json(nullptr)},
                    {"b_noise_source", p ? json(p->b_noise_source) : json(nullptr)}};
  out["chosen"] = report && report->chosen ? records::to_json(*report->chosen) : json(nullptr);
  out["predicted_vs_measured"] = predicted_vs_measured(report);
  json replans = json::array();
  if (report)
    for (const auto& r : report->replans) replans.push_back(records::to_json(r));
  out["replans"] = replans;
  out["report_state"] = report ? json(report->state) : json(nullptr);
  return out;
}

}  // namespace tula::service
