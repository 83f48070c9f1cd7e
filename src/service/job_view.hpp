// A job as the API shows it: its stored record joined with what its tune
// report says so far (profile, plan, choice, progress, predicted against
// measured, re-plans). No LibTorch here.
#pragma once
#include <nlohmann/json.hpp>

#include "records/tune_report.hpp"
#include "service/store.hpp"

namespace tula::service {

// A line of the job list: state, what it trains, how far it is.
nlohmann::json job_summary(const JobRecord& job, const records::TuneReport* report);
// Everything about one job; `history` holds its transitions and attempts.
nlohmann::json job_detail(const JobRecord& job, const records::TuneReport* report, const nlohmann::json& transitions,
                          const nlohmann::json& attempts);

}  // namespace tula::service
