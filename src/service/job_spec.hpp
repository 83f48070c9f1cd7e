// A job as the API takes it: a JSON object whose fields are `tula tune`'s
// flags with '_' for '-' ({"model": "small_cnn", "target_accuracy": 0.85,
// "objective": "knee"}). Checked field by field (unknown fields, wrong types)
// and then as tune checks its options; the file paths it names must lie
// under the server's data roots. The checked spec becomes the tune command.
// No LibTorch here.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tula::service {

// A spec the API must refuse; the message names the field and the problem.
class SpecError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct SpecRules {
  std::vector<std::string> data_roots;  // absolute; a path field must resolve under one of them
  std::string backend = "local";        // the server's backend (a spec may not choose another)
};

// The spec with every field checked; throws SpecError.
nlohmann::json check_job_spec(const nlohmann::json& spec, const SpecRules& rules);

// `tula tune`'s arguments (after "tune") for a checked spec, training into out_dir.
std::vector<std::string> tune_arguments(const nlohmann::json& spec, const std::string& out_dir, const std::string& backend);

// The field names the API accepts, for documentation and error messages.
std::vector<std::string> job_spec_fields();

// True when `path` (absolute), with every symlink and ".." resolved, lies
// inside one of `roots`.
bool path_is_under(const std::string& path, const std::vector<std::string>& roots);

}  // namespace tula::service
