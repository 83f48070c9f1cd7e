// What check_job_spec says of a spec: its refusal, or "accepted".
#pragma once
#include <string>

#include "service/job_spec.hpp"

namespace tula::service {

inline std::string refusal(const nlohmann::json& spec, const SpecRules& rules = {}) {
  try {
    check_job_spec(spec, rules);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace tula::service
