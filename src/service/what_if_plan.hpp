// POST /v1/plan: stateless what-if planning. The body holds a profile (as
// `tula profile` writes it), a catalog (or none: this machine at
// price_per_hour), an objective, and optionally epochs and draws; the answer
// is the plan as `tula plan --json` prints it. Kept apart from the HTTP code
// (httplib's headers and Eigen's do not mix in one file). No LibTorch here.
#pragma once
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tula::service {

// A request the planner cannot answer: the HTTP status and why.
class PlanRequestError : public std::runtime_error {
 public:
  PlanRequestError(int status_code, const std::string& message) : std::runtime_error(message), status(status_code) {}
  int status;
};

nlohmann::json plan_what_if(const nlohmann::json& body);

}  // namespace tula::service
