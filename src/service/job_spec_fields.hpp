// The fields of a job spec: the options of the schema a job spec takes
// (tune/option_schema.hpp, in_job_spec), each with its kind and the values
// it may take. The bounds keep every number inside what tune and the engine
// compute with (int64 step counts, batch products, a double cast to an
// integer) and far beyond what a real job asks for; docs/api.md lists them
// with the reasons, and a test holds that table to this one. `tula tune`
// checks the same bounds with the same words.
// No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/option_schema.hpp"

namespace tula::service {

using tune::FieldKind;
using SpecField = tune::OptionSpec;
using tune::kMaxAccumulation;
using tune::kMaxBatch;
using tune::kMaxBudget;
using tune::kMaxDeadlineHours;
using tune::kMaxWorkers;

const std::vector<SpecField>& spec_fields();
const SpecField* find_spec_field(const std::string& name);

// What the field takes, for messages and docs: "a number from 0 to 10000",
// "an integer from 1 to 1048576", "a string of at most 64 characters".
std::string describe_field(const SpecField& f);

// `v` is of the field's kind and within its bounds.
bool field_accepts(const SpecField& f, const nlohmann::json& v);

// The field's value set into the options, for tune's own checks: a flag
// named no_X given true clears its option.
void apply_field(const SpecField& f, tune::TuneOptions& o, const nlohmann::json& v);

}  // namespace tula::service
