#include "service/job_spec.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>

#include "tune/tune_options.hpp"

namespace tula::service {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

enum class Kind { Text, Number, Integer, Flag, Path };

struct Field {
  const char* name;
  Kind kind;
  std::function<void(tune::TuneOptions&, const json&)> apply;  // into options, for tune's own checks
};

template <class T>
std::function<void(tune::TuneOptions&, const json&)> set(T tune::TuneOptions::*member) {
  return [member](tune::TuneOptions& o, const json& v) { o.*member = v.get<T>(); };
}

const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      {"model", Kind::Text, set(&tune::TuneOptions::model)},
      {"dataset", Kind::Text, set(&tune::TuneOptions::dataset)},
      {"data_dir", Kind::Path, set(&tune::TuneOptions::data_dir)},
      {"target_accuracy", Kind::Number, set(&tune::TuneOptions::target_accuracy)},
      {"epochs", Kind::Number, set(&tune::TuneOptions::epochs)},
      {"objective", Kind::Text, set(&tune::TuneOptions::objective)},
      {"resources", Kind::Text, set(&tune::TuneOptions::resources)},
      {"optimizer", Kind::Text, set(&tune::TuneOptions::optimizer)},
      {"lr", Kind::Number, set(&tune::TuneOptions::lr)},
      {"reference_batch", Kind::Integer, set(&tune::TuneOptions::reference_batch)},
      {"lr_scaling", Kind::Text, set(&tune::TuneOptions::lr_scaling)},
      {"momentum", Kind::Number, set(&tune::TuneOptions::momentum)},
      {"weight_decay", Kind::Number, set(&tune::TuneOptions::weight_decay)},
      {"warmup_epochs", Kind::Number, set(&tune::TuneOptions::warmup_epochs)},
      {"seed", Kind::Integer, [](tune::TuneOptions& o, const json& v) { o.seed = v.get<uint64_t>(); }},
      {"profile", Kind::Path, set(&tune::TuneOptions::profile_path)},
      {"profile_budget", Kind::Number, set(&tune::TuneOptions::profile_budget_s)},
      {"pilot_steps", Kind::Integer, set(&tune::TuneOptions::pilot_steps)},
      {"pilot_workers", Kind::Integer, set(&tune::TuneOptions::pilot_workers)},
      {"pilot_batch", Kind::Integer, set(&tune::TuneOptions::pilot_batch)},
      {"price_per_hour", Kind::Number, set(&tune::TuneOptions::local_price_per_hour)},
      {"watch_every", Kind::Integer, set(&tune::TuneOptions::watch_every_steps)},
      {"watch_every_seconds", Kind::Number, set(&tune::TuneOptions::watch_every_s)},
      {"synthetic_size", Kind::Integer, set(&tune::TuneOptions::synthetic_size)},
      {"eval_every_epochs", Kind::Number, set(&tune::TuneOptions::eval_every_epochs)},
      {"min_saving", Kind::Number, set(&tune::TuneOptions::min_saving)},
      {"restart_cost", Kind::Number, set(&tune::TuneOptions::restart_cost_s)},
      {"no_replan", Kind::Flag, [](tune::TuneOptions& o, const json& v) { o.replan = !v.get<bool>(); }},
      {"max_epochs", Kind::Number, set(&tune::TuneOptions::max_epochs)},
      {"max_retries", Kind::Integer, [](tune::TuneOptions& o, const json& v) { o.max_retries = v.get<int>(); }},
      {"start_at", Kind::Text, set(&tune::TuneOptions::start_at)},
  };
  return table;
}

const Field* find_field(const std::string& name) {
  for (const auto& f : fields())
    if (name == f.name) return &f;
  return nullptr;
}

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::Text: return "a string";
    case Kind::Path: return "an absolute path (a string)";
    case Kind::Number: return "a number";
    case Kind::Integer: return "an integer";
    case Kind::Flag: return "true or false";
  }
  return "?";
}

bool has_kind(const json& v, Kind k) {
  switch (k) {
    case Kind::Text:
    case Kind::Path: return v.is_string();
    case Kind::Number: return v.is_number();
    case Kind::Integer: return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= (int64_t{1} << 40);
    case Kind::Flag: return v.is_boolean();
  }
  return false;
}

void check_path(const std::string& field, const std::string& path, const SpecRules& rules) {
  if (path.empty() || path[0] != '/') throw SpecError(field + " must be an absolute path (got '" + path + "')");
  if (path.find('\0') != std::string::npos) throw SpecError(field + " holds a NUL byte");
  if (!path_is_under(path, rules.data_roots)) {
    std::string roots;
    for (const auto& r : rules.data_roots) roots += (roots.empty() ? "" : ", ") + r;
    throw SpecError(field + " '" + path + "' is outside the server's data roots (" + roots + ")");
  }
}

}  // namespace

std::vector<std::string> job_spec_fields() {
  std::vector<std::string> out;
  for (const auto& f : fields()) out.push_back(f.name);
  return out;
}

bool path_is_under(const std::string& path, const std::vector<std::string>& roots) {
  std::error_code ec;
  const fs::path resolved = fs::weakly_canonical(fs::path(path), ec);
  if (ec) return false;
  for (const auto& root : roots) {
    const fs::path r = fs::weakly_canonical(fs::path(root), ec);
    if (ec) continue;
    auto [r_end, p_end] = std::mismatch(r.begin(), r.end(), resolved.begin(), resolved.end());
    // An empty last component means r ended with '/'.
    if (r_end == r.end() || (std::next(r_end) == r.end() && r_end->empty())) return true;
  }
  return false;
}

json check_job_spec(const json& spec, const SpecRules& rules) {
  if (!spec.is_object()) throw SpecError("the job must be a JSON object (got " + std::string(spec.type_name()) + ")");
  tune::TuneOptions o;
  for (const auto& [name, value] : spec.items()) {
    const Field* f = find_field(name);
    if (!f) {
      std::string known;
      for (const auto& k : job_spec_fields()) known += (known.empty() ? "" : ", ") + k;
      throw SpecError("unknown field '" + name + "' (known: " + known + ")");
    }
    if (!has_kind(value, f->kind)) {
      throw SpecError("field '" + name + "' must be " + kind_name(f->kind) + " (got " + value.dump() + ")");
    }
    if (f->kind == Kind::Path) check_path(name, value.get<std::string>(), rules);
    f->apply(o, value);
  }
  if (o.resources != "local") check_path("resources", o.resources, rules);
  o.backend = rules.backend;
  o.out_dir = "/nonexistent-checked-only";  // the server gives it the job's directory
  try {
    o.validate();
  } catch (const std::invalid_argument& e) {
    std::string message = e.what();
    // tune speaks of flags; the API's fields are the same names with '_'.
    for (size_t at = message.find("--"); at != std::string::npos; at = message.find("--", at)) {
      message.erase(at, 2);
      for (size_t i = at; i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) || message[i] == '-'); ++i)
        if (message[i] == '-') message[i] = '_';
    }
    throw SpecError(message);
  }
  return spec;
}

std::vector<std::string> tune_arguments(const json& spec, const std::string& out_dir, const std::string& backend) {
  std::vector<std::string> args = {"--out", out_dir, "--backend", backend, "--progress", "lines"};
  for (const auto& f : fields()) {
    if (!spec.contains(f.name)) continue;
    std::string flag = std::string("--") + f.name;
    std::replace(flag.begin(), flag.end(), '_', '-');
    const json& v = spec.at(f.name);
    if (f.kind == Kind::Flag) {
      if (v.get<bool>()) args.push_back(flag);
      continue;
    }
    args.push_back(flag);
    args.push_back(v.is_string() ? v.get<std::string>() : v.dump());
  }
  return args;
}

}  // namespace tula::service
