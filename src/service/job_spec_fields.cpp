#include "service/job_spec_fields.hpp"

namespace tula::service {

const std::vector<SpecField>& spec_fields() {
  static const std::vector<SpecField> fields = [] {
    std::vector<SpecField> out;
    for (const auto& s : tune::option_specs())
      if (s.in_job_spec) out.push_back(s);
    return out;
  }();
  return fields;
}

const SpecField* find_spec_field(const std::string& name) {
  for (const auto& f : spec_fields())
    if (name == f.name) return &f;
  return nullptr;
}

std::string describe_field(const SpecField& f) { return tune::describe_option(f); }

bool field_accepts(const SpecField& f, const nlohmann::json& v) { return tune::option_accepts(f, v); }

void apply_field(const SpecField& f, tune::TuneOptions& o, const nlohmann::json& v) {
  tune::set_option(f, o, f.negated ? nlohmann::json(!v.get<bool>()) : v);
}

}  // namespace tula::service
