// The fields of a job spec: each one's kind and the values it may take. The
// bounds keep every number inside what tune and the engine compute with
// (int64 step counts, batch products, a double cast to an integer) and far
// beyond what a real job asks for; docs/api.md lists them with the reasons,
// and a test holds that table to this one.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tune/tune_options.hpp"

namespace tula::service {

enum class FieldKind { Text, Number, Integer, Flag, Path };

struct SpecField {
  const char* name;
  FieldKind kind;
  // Number: from lo to hi, an end excluded where *_open. Integer: ilo to ihi.
  double lo = 0, hi = 0;
  bool lo_open = false, hi_open = false;
  uint64_t ilo = 0, ihi = 0;
  size_t max_chars = 0;  // Text and Path
  std::function<void(tune::TuneOptions&, const nlohmann::json&)> apply;  // into options, for tune's own checks
};

const std::vector<SpecField>& spec_fields();
const SpecField* find_spec_field(const std::string& name);

// What the field takes, for messages and docs: "a number from 0 to 10000",
// "an integer from 1 to 1048576", "a string of at most 64 characters".
std::string describe_field(const SpecField& f);

// `v` is of the field's kind and within its bounds.
bool field_accepts(const SpecField& f, const nlohmann::json& v);

// Bounds inside the string fields: the objective's deadline and budget, and
// the configuration of start_at.
inline constexpr double kMaxDeadlineHours = 8760;  // a year
inline constexpr double kMaxBudget = 1e9;          // currency units
inline constexpr int64_t kMaxWorkers = 16384;
inline constexpr int64_t kMaxBatch = 1 << 20;      // per worker, and the reference batch
inline constexpr int64_t kMaxAccumulation = 4096;

}  // namespace tula::service
