#include "service/job_spec_fields.hpp"

#include <cstdio>
#include <limits>

#include <fmt/format.h>

namespace tula::service {
namespace {

using nlohmann::json;
using tune::TuneOptions;
using Apply = std::function<void(TuneOptions&, const json&)>;

// Longest path a spec may name (Linux's PATH_MAX) and longest other string.
constexpr size_t kPathChars = 4096;
constexpr size_t kNameChars = 64;

// Reasons for the bounds are in docs/api.md ("Job specs").
constexpr double kMaxEpochs = 10000;
constexpr double kMaxSeconds = 86400;  // a day
constexpr uint64_t kMaxSteps = 10'000'000;

template <class T>
Apply set(T TuneOptions::*member) {
  return [member](TuneOptions& o, const json& v) { o.*member = v.get<T>(); };
}

SpecField text(const char* name, size_t max_chars, Apply apply) {
  return {name, FieldKind::Text, 0, 0, false, false, 0, 0, max_chars, std::move(apply)};
}
SpecField path(const char* name, Apply apply) {
  return {name, FieldKind::Path, 0, 0, false, false, 0, 0, kPathChars, std::move(apply)};
}
SpecField flag(const char* name, Apply apply) {
  return {name, FieldKind::Flag, 0, 0, false, false, 0, 0, 0, std::move(apply)};
}
// From lo to hi, both included.
SpecField number(const char* name, double lo, double hi, Apply apply) {
  return {name, FieldKind::Number, lo, hi, false, false, 0, 0, 0, std::move(apply)};
}
// Above lo (excluded), up to hi.
SpecField positive(const char* name, double hi, Apply apply) {
  return {name, FieldKind::Number, 0, hi, true, false, 0, 0, 0, std::move(apply)};
}
// From lo, below hi (excluded).
SpecField below(const char* name, double lo, double hi, Apply apply) {
  return {name, FieldKind::Number, lo, hi, false, true, 0, 0, 0, std::move(apply)};
}
SpecField integer(const char* name, uint64_t lo, uint64_t hi, Apply apply) {
  return {name, FieldKind::Integer, 0, 0, false, false, lo, hi, 0, std::move(apply)};
}

std::string number_text(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.10g", v);
  return text;
}

}  // namespace

const std::vector<SpecField>& spec_fields() {
  static const std::vector<SpecField> table = {
      text("model", kPathChars, set(&TuneOptions::model)),
      text("dataset", kNameChars, set(&TuneOptions::dataset)),
      path("data_dir", set(&TuneOptions::data_dir)),
      below("target_accuracy", 0, 1, set(&TuneOptions::target_accuracy)),
      number("epochs", 0, kMaxEpochs, set(&TuneOptions::epochs)),
      text("objective", kNameChars, set(&TuneOptions::objective)),
      text("resources", kPathChars, set(&TuneOptions::resources)),
      text("optimizer", kNameChars, set(&TuneOptions::optimizer)),
      positive("lr", 100, set(&TuneOptions::lr)),
      integer("reference_batch", 1, kMaxBatch, set(&TuneOptions::reference_batch)),
      text("lr_scaling", kNameChars, set(&TuneOptions::lr_scaling)),
      below("momentum", 0, 1, set(&TuneOptions::momentum)),
      number("weight_decay", 0, 1, set(&TuneOptions::weight_decay)),
      number("warmup_epochs", 0, kMaxEpochs, set(&TuneOptions::warmup_epochs)),
      integer("seed", 0, std::numeric_limits<uint64_t>::max(), set(&TuneOptions::seed)),
      path("profile", set(&TuneOptions::profile_path)),
      positive("profile_budget", kMaxSeconds, set(&TuneOptions::profile_budget_s)),
      integer("pilot_steps", 0, 100'000, set(&TuneOptions::pilot_steps)),
      integer("pilot_workers", 1, 1024, set(&TuneOptions::pilot_workers)),
      integer("pilot_batch", 1, kMaxBatch, set(&TuneOptions::pilot_batch)),
      number("price_per_hour", 0, 10'000, set(&TuneOptions::local_price_per_hour)),
      integer("watch_every", 1, kMaxSteps, set(&TuneOptions::watch_every_steps)),
      positive("watch_every_seconds", kMaxSeconds, set(&TuneOptions::watch_every_s)),
      integer("synthetic_size", 0, 100'000'000, set(&TuneOptions::synthetic_size)),
      integer("image_size", 0, 4096, set(&TuneOptions::image_size)),
      positive("eval_crop", 1, set(&TuneOptions::eval_crop)),
      positive("eval_every_epochs", kMaxEpochs, set(&TuneOptions::eval_every_epochs)),
      integer("validation_size", 0, 100'000'000, set(&TuneOptions::validation_size)),
      below("eval_average", 0, 1, set(&TuneOptions::eval_average)),
      number("min_saving", 0, 1, set(&TuneOptions::min_saving)),
      number("restart_cost", 0, kMaxSeconds, set(&TuneOptions::restart_cost_s)),
      flag("no_replan", [](TuneOptions& o, const json& v) { o.replan = !v.get<bool>(); }),
      flag("no_augment", [](TuneOptions& o, const json& v) { o.augment = !v.get<bool>(); }),
      flag("warmup_at_reference", [](TuneOptions& o, const json& v) { o.warmup_at_reference = v.get<bool>(); }),
      positive("max_epochs", kMaxEpochs, set(&TuneOptions::max_epochs)),
      integer("max_retries", 0, 1000, set(&TuneOptions::max_retries)),
      text("start_at", kNameChars, set(&TuneOptions::start_at)),
  };
  return table;
}

const SpecField* find_spec_field(const std::string& name) {
  for (const auto& f : spec_fields())
    if (name == f.name) return &f;
  return nullptr;
}

std::string describe_field(const SpecField& f) {
  switch (f.kind) {
    case FieldKind::Text: return fmt::format("a string of at most {} characters", f.max_chars);
    case FieldKind::Path: return fmt::format("an absolute path (a string of at most {} characters)", f.max_chars);
    case FieldKind::Flag: return "true or false";
    case FieldKind::Integer: return fmt::format("an integer from {} to {}", f.ilo, f.ihi);
    case FieldKind::Number: break;
  }
  const std::string lo = number_text(f.lo), hi = number_text(f.hi);
  if (f.lo_open) return "a number above " + lo + " and at most " + hi;
  if (f.hi_open) return "a number from " + lo + " to below " + hi;
  return "a number from " + lo + " to " + hi;
}

bool field_accepts(const SpecField& f, const json& v) {
  switch (f.kind) {
    case FieldKind::Text:
    case FieldKind::Path: return v.is_string() && v.get_ref<const std::string&>().size() <= f.max_chars;
    case FieldKind::Flag: return v.is_boolean();
    case FieldKind::Integer: {
      // Parsed text gives number_unsigned for n >= 0; a value built in C++ may be a signed one.
      const bool whole = v.is_number_unsigned() || (v.is_number_integer() && v.get<int64_t>() >= 0);
      return whole && v.get<uint64_t>() >= f.ilo && v.get<uint64_t>() <= f.ihi;
    }
    case FieldKind::Number: break;
  }
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  const bool above_lo = f.lo_open ? d > f.lo : d >= f.lo;
  const bool below_hi = f.hi_open ? d < f.hi : d <= f.hi;
  return above_lo && below_hi;
}

}  // namespace tula::service
