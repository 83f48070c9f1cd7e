// The service's pages for people, served by the same binary: the job list
// with a submission form, and a job's page (state, progress, predicted
// against measured, the time/cost front and knee, loss and accuracy, the
// re-plans) that follows the job live through its event stream. No chart
// library and no URL outside the server: the charts are SVG drawn here
// (render/chart.hpp), so the page works offline.
//
// A page is a shell with no data in it, the same for everyone, plus one
// script and one style sheet served as files (/static/tula.js and
// /static/tula.css: the pages' policy runs no inline script). The script
// fetches everything else from the API; on a server with a token it asks
// for the token once, keeps it in the tab's sessionStorage, and sends it on
// every request as "Authorization: Bearer TOKEN". No LibTorch here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "records/metrics_records.hpp"
#include "records/tune_report.hpp"

namespace tula::service {

std::string jobs_page();
// The job's page; its live part is fetched from job_fragment, so that an
// update replaces it in place.
std::string job_page(int64_t id);
// The pages' one script and one style sheet.
const char* page_script();
std::string page_style();
// The job's live part: its header and the report's sections, redrawn from
// the report (may be null) and the metrics records (steps with their loss).
std::string job_fragment(const nlohmann::json& detail, const records::TuneReport* report,
                         const std::vector<records::MetricsRecord>& metrics);

}  // namespace tula::service
