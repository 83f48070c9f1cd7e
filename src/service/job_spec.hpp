// A job as the API takes it: a JSON object whose fields are `tula tune`'s
// flags with '_' for '-' ({"model": "small_cnn", "target_accuracy": 0.85,
// "objective": "knee"}). Checked field by field (unknown fields, wrong types,
// values out of bounds: job_spec_fields.hpp), then the names (a zoo model, a
// data set the engine reads), then as tune checks its options; the file paths
// it names must lie under the server's data roots, at submit and again just
// before its process starts. The checked spec becomes the tune command.
// No LibTorch here.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "service/request_json.hpp"

namespace tula::service {

// A spec the API must refuse (400); the message names the field and the problem.
class SpecError : public BadRequest {
 public:
  using BadRequest::BadRequest;
};

struct SpecRules {
  std::vector<std::string> data_roots;  // absolute; a path field must resolve under one of them
  std::string backend = "local";        // the server's backend (a spec may not choose another)
};

// A request body as a spec: parse_request_json, with a number too large for
// a double reported against the field's bounds. Throws BadRequest.
nlohmann::json parse_job_spec(const std::string& body);

// The spec with every field checked; throws SpecError.
nlohmann::json check_job_spec(const nlohmann::json& spec, const SpecRules& rules);

// The spec's paths resolved again against the roots (a symlink may have
// changed since the submit); throws SpecError naming the path and where it
// leads now.
void recheck_spec_paths(const nlohmann::json& spec, const SpecRules& rules);

// `tula tune`'s arguments (after "tune") for a checked spec, training into
// out_dir; tune resolves every path against `data_roots` again before it
// opens it.
std::vector<std::string> tune_arguments(const nlohmann::json& spec, const std::string& out_dir,
                                        const std::string& backend, const std::vector<std::string>& data_roots);

// The field names the API accepts, for documentation and error messages.
std::vector<std::string> job_spec_fields();

// True when `path` (absolute), with every symlink and ".." resolved, lies
// inside one of `roots`.
bool path_is_under(const std::string& path, const std::vector<std::string>& roots);

}  // namespace tula::service
