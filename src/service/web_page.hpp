// The service's pages for people, served by the same binary: the job list
// with a submission form, and a job's page (state, progress, predicted
// against measured, the time/cost front and knee, loss and accuracy, the
// re-plans) that follows the job live through its event stream. No chart
// library and no URL outside the server: the charts are SVG drawn here
// (render/chart.hpp), so the page works offline. No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/metrics_records.hpp"
#include "records/tune_report.hpp"

namespace tula::service {

std::string jobs_page();
// `detail` is the API's view of the job; its charts are fetched from
// job_fragment so that a live update replaces them in place.
std::string job_page(const nlohmann::json& detail);
// The job's live part: its header and the report's sections, redrawn from
// the report (may be null) and the metrics records (steps with their loss).
std::string job_fragment(const nlohmann::json& detail, const records::TuneReport* report,
                         const std::vector<records::MetricsRecord>& metrics);

}  // namespace tula::service
