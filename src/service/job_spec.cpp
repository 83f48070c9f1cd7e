#include "service/job_spec.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "common/confined_path.hpp"
#include "common/engine_names.hpp"
#include "plan/objective.hpp"
#include "service/job_spec_fields.hpp"
#include "tune/tune_options.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Longest path quoted back in a message.
constexpr size_t kQuotedPath = 200;

std::string roots_text(const SpecRules& rules) { return common::join_names(rules.data_roots); }

// The path as the spec gives it, checked: absolute, no NUL, under a root now.
void check_path(const std::string& field, const std::string& path, const SpecRules& rules) {
  if (path.empty() || path[0] != '/') throw SpecError(field + " must be an absolute path (got '" + quote_text(path) + "')");
  if (path.find('\0') != std::string::npos) throw SpecError(field + " holds a NUL byte");
  if (!path_is_under(path, rules.data_roots)) {
    throw SpecError(field + " '" + quote_text(path, kQuotedPath) + "' is outside the server's data roots (" +
                    roots_text(rules) + ")");
  }
}

bool is_path(const std::string& text) { return !text.empty() && text[0] == '/'; }

// A zoo model, or a TorchScript file under the data roots.
void check_model(const std::string& model, const SpecRules& rules) {
  if (common::is_zoo_model(model)) return;
  if (!is_path(model)) {
    throw SpecError("model '" + quote_text(model) + "' is not a model of the zoo (known: " +
                    common::join_names(common::zoo_model_names()) +
                    ") nor an absolute path to a TorchScript .pt file under the data roots");
  }
  if (!common::is_script_model_path(model)) {
    throw SpecError("model '" + quote_text(model, kQuotedPath) + "': a model given as a path must be a TorchScript file ending in .pt");
  }
  check_path("model", model, rules);
}

void check_dataset(const std::string& dataset) {
  if (!common::canonical_dataset_name(dataset).empty()) return;
  throw SpecError("dataset '" + quote_text(dataset) + "' is not a data set this server reads (known: " +
                  common::join_names(common::dataset_names()) + ")");
}

// The numbers inside the objective and start_at, which tune has parsed already.
void check_inner_bounds(const tune::TuneOptions& o) {
  const auto objective = plan::parse_objective(o.job.objective);
  if (objective.kind == plan::Objective::Kind::Deadline && objective.limit > kMaxDeadlineHours * 3600) {
    throw SpecError(fmt::format("objective '{}': the deadline must be at most {} hours (a year)", o.job.objective,
                                static_cast<int>(kMaxDeadlineHours)));
  }
  if (objective.kind == plan::Objective::Kind::Budget && objective.limit > kMaxBudget) {
    throw SpecError("objective '" + o.job.objective + "': the budget must be at most 1000000000");
  }
  if (o.watch.start_at.empty()) return;
  const auto c = tune::parse_manual_config(o.watch.start_at);
  if (c.workers > kMaxWorkers || c.batch_per_worker > kMaxBatch || c.accumulation_steps > kMaxAccumulation) {
    throw SpecError(fmt::format("start_at '{}': at most {} workers, a batch of {} per worker and {} accumulation steps",
                                o.watch.start_at, kMaxWorkers, kMaxBatch, kMaxAccumulation));
  }
}

// tune speaks of flags; the API's fields are the same names with '_'.
std::string in_field_names(std::string message) {
  for (size_t at = message.find("--"); at != std::string::npos; at = message.find("--", at)) {
    message.erase(at, 2);
    for (size_t i = at; i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '-'); ++i)
      if (message[i] == '-') message[i] = '_';
  }
  return message;
}

void check_field(const std::string& name, const json& value, tune::TuneOptions& o, const SpecRules& rules) {
  const SpecField* f = find_spec_field(name);
  if (!f) {
    throw SpecError("unknown field '" + quote_text(name) + "' (known: " + common::join_names(job_spec_fields()) + ")");
  }
  const bool numeric = f->kind == FieldKind::Number || f->kind == FieldKind::Integer;
  if (numeric && value.is_number()) {
    // The bound's words are tune's own (option_schema.hpp): `tula tune` says the same after the flag.
    if (const auto refusal = tune::bound_refusal(*f, value)) throw SpecError("field '" + name + "' " + *refusal);
  } else if (!field_accepts(*f, value)) {
    throw SpecError("field '" + name + "' must be " + describe_field(*f) + " (got " + quote_json(value) + ")");
  }
  if (f->kind == FieldKind::Path) check_path(name, value.get<std::string>(), rules);
  apply_field(*f, o, value);
}

// Each path of the spec (the model only when it is one), with its field.
std::vector<std::pair<std::string, std::string>> spec_paths(const json& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& f : spec_fields()) {  // the fields that are always paths (option_schema.cpp)
    if (f.kind == FieldKind::Path && spec.contains(f.name)) out.emplace_back(f.name, spec.at(f.name).get<std::string>());
  }
  const std::string resources = spec.value("resources", "local"), model = spec.value("model", "");
  if (resources != "local") out.emplace_back("resources", resources);
  if (is_path(model)) out.emplace_back("model", model);
  return out;
}

}  // namespace

std::vector<std::string> job_spec_fields() {
  std::vector<std::string> out;
  for (const auto& f : spec_fields()) out.push_back(f.name);
  return out;
}

bool path_is_under(const std::string& path, const std::vector<std::string>& roots) {
  return common::resolve_under(path, roots).has_value();
}

json parse_job_spec(const std::string& body) {
  try {
    return parse_request_json(body);
  } catch (const NumberOutOfRange& e) {
    const SpecField* f = find_spec_field(e.field());
    if (!f || (f->kind != FieldKind::Number && f->kind != FieldKind::Integer)) throw;
    throw SpecError(std::string(e.what()) + "; '" + e.field() + "' must be " + describe_field(*f));
  }
}

json check_job_spec(const json& spec, const SpecRules& rules) {
  if (!spec.is_object()) throw SpecError("the job must be a JSON object (got " + std::string(spec.type_name()) + ")");
  tune::TuneOptions o;
  for (const auto& [name, value] : spec.items()) check_field(name, value, o, rules);
  check_model(o.job.model, rules);
  check_dataset(o.job.dataset);
  if (o.job.resources != "local") check_path("resources", o.job.resources, rules);
  o.job.backend = rules.backend;
  o.job.out_dir = "/nonexistent-checked-only";  // the server gives it the job's directory
  try {
    o.validate();
    check_inner_bounds(o);
  } catch (const SpecError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw SpecError(in_field_names(e.what()));
  }
  return spec;
}

void recheck_spec_paths(const json& spec, const SpecRules& rules) {
  for (const auto& [field, path] : spec_paths(spec)) {
    if (path_is_under(path, rules.data_roots)) continue;
    std::error_code ec;
    const std::string leads = fs::weakly_canonical(path, ec).string();
    throw SpecError(field + " '" + quote_text(path, kQuotedPath) + "' now leads to " +
                    (ec ? "a place that cannot be resolved" : quote_text(leads, kQuotedPath)) +
                    ", outside the server's data roots (" + roots_text(rules) + "); it was inside at submit");
  }
}

std::vector<std::string> tune_arguments(const json& spec, const std::string& out_dir, const std::string& backend,
                                        const std::vector<std::string>& data_roots) {
  std::vector<std::string> args = {"--out", out_dir, "--backend", backend, "--progress", "lines"};
  for (const auto& root : data_roots) args.insert(args.end(), {"--data-root", root});
  for (const auto& f : spec_fields()) {
    if (!spec.contains(f.name)) continue;
    const std::string flag = f.flag();
    const json& v = spec.at(f.name);
    if (f.kind == FieldKind::Flag) {
      if (v.get<bool>()) args.push_back(flag);
      continue;
    }
    args.push_back(flag);
    args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  }
  return args;
}

}  // namespace tula::service
