// The options of a tune job, each declared once (option_schema.cpp): its
// name (the job spec's field; the flag is the same with '-' for '_'), what it
// takes and its bounds, its help, the TuneOptions field it sets, its key in
// tune.json and the value a tune.json written before it existed stands for,
// and who takes it (`tula tune`'s flags, the API's job spec, the workers'
// `tula train`). From this one table come `tula tune`'s flags
// (cli/schema_options.hpp), the job spec's fields and their checks
// (service/job_spec_fields.hpp), tune.json (to_json, tune_options_from_json),
// the arguments a worker receives (append_train_options) and every bound's
// check and message (bound_refusal).
// No LibTorch here, nor CLI11.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/number_range.hpp"
#include "tune/tune_options.hpp"

namespace tula::tune {

enum class FieldKind { Text, Number, Integer, Flag, Path, List };

// From lo to hi, both included.
struct IntegerRange {
  uint64_t lo = 0, hi = 0;
};

// Whether `tula train` (each worker of a launch) takes the option, under the
// same flag: always; only when it is not zero or empty (0 means "not given"
// to both); or, for a flag, when it is given.
enum class ToTrain { No, Always, WhenSet };

// Where an option's value lives in TuneOptions, typed.
using OptionValue =
    std::variant<std::string*, double*, int64_t*, uint64_t*, int*, bool*, std::vector<std::string>*>;
using OptionField = OptionValue (*)(TuneOptions&);

struct OptionSpec {
  const char* name = "";  // "target_accuracy": the job spec's field; the flag is --target-accuracy
  FieldKind kind = FieldKind::Text;
  OptionField field = nullptr;
  const char* help = "";
  common::NumberRange range;   // a Number's
  IntegerRange integer_range;  // an Integer's
  // The value that stands for "not given" where a flag has a value whether
  // given or not (pilot_workers 0: by the objective): `tula tune` takes it; a
  // job spec leaves the field out instead, and the API refuses it.
  std::optional<int64_t> unset;
  size_t max_chars = 0;             // Text and Path
  const char* json_key = nullptr;   // tune.json's key where it is not `name`
  bool negated = false;             // a Flag "no_X": given, it sets the field false
  bool both_ways = false;           // a Flag that also takes its opposite: --no-X, or --X for "no_X"
  bool in_job_spec = true;          // false: `tula tune` only (the server sets it, or it is for experiments)
  bool in_cli = true;               // false: tune.json only (how a recorded job ran; no flag sets it)
  bool in_record = true;            // false: not kept in tune.json (how this run shows progress)
  bool show_default = true;         // --help shows the default
  ToTrain to_train = ToTrain::No;   // handed to the workers' `tula train` (append_train_options)
  // A tune.json written before the option existed stands for this value (the
  // job resumes and replays as it ran); none: today's default.
  std::optional<nlohmann::json> recorded_before;

  std::string flag() const;  // "--target-accuracy"
  const char* key() const { return json_key ? json_key : name; }
};

const std::vector<OptionSpec>& option_specs();
const OptionSpec* find_option(const std::string& name);
const OptionSpec& option(const std::string& name);  // throws std::logic_error for a name not in the table

// Bounds inside the string options (the objective's deadline and budget, the
// configurations given by hand) and of the batch options.
inline constexpr double kMaxDeadlineHours = 8760;  // a year
inline constexpr double kMaxBudget = 1e9;          // currency units
inline constexpr int64_t kMaxWorkers = 16384;
inline constexpr int64_t kMaxBatch = 1 << 20;      // per worker, and the reference batch
inline constexpr int64_t kMaxAccumulation = 4096;

// What the option takes, for messages and docs: "a number from 0 to 10000",
// "an integer from 1 to 1048576", "a string of at most 64 characters".
std::string describe_option(const OptionSpec& s);

// `v` is of the option's kind and within its bounds.
bool option_accepts(const OptionSpec& s, const nlohmann::json& v);

// Where `v` (a number of the option's kind) is out of bounds: "must be a
// number from 0 to below 1 (got 1.5)", the one message the CLI and the API
// give after the option's name; none where it is within them.
std::optional<std::string> bound_refusal(const OptionSpec& s, const nlohmann::json& v);

// Every bound of the table over `o`; throws std::invalid_argument naming the
// flag: "--target-accuracy must be a number from 0 to below 1 (got 85)".
void check_option_bounds(const TuneOptions& o);

// The option's bound over `field` (where another command keeps the option,
// as `tula train` does the ones it takes), with the same message.
void check_option_bound(const OptionSpec& s, OptionValue field);

// A field's value as JSON (whichever options struct holds it).
nlohmann::json field_json(OptionValue field);

// The option's value in `o` as JSON, and `v` set into `o`.
nlohmann::json option_json(const OptionSpec& s, const TuneOptions& o);
void set_option(const OptionSpec& s, TuneOptions& o, const nlohmann::json& v);

// A number as a child process reads it back exactly: the shortest text that
// round-trips a double (0.1 stays "0.1"; 1/3 keeps its 17 digits).
std::string exact_number(double v);

// The option's value in `o` as an argument text, lossless.
std::string option_text(const OptionSpec& s, const TuneOptions& o);

// The options `tula train` takes from the job (to_train), each under its
// flag with its exact value, appended to a worker's command line.
void append_train_options(std::vector<std::string>& args, const TuneOptions& o);

// "--lr", "0.05": the flag and its exact value, appended to a child's command line.
void append_option(std::vector<std::string>& args, const TuneOptions& o, const std::string& name);

}  // namespace tula::tune
