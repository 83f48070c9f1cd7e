// tune.json: where a `tula tune` job stands, so that `tula tune --resume DIR`
// continues it and a supervisor can show its phase. One writer, one reader.
// The options are kept as the JSON the tune part writes (this part sits below
// it). The format is documented in docs/formats.md. No LibTorch here.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/layout.hpp"
#include "records/states.hpp"

namespace tula::records {


// A stretch of wall-clock time that was not the job's (it was stopped).
struct Pause {
  double resumed_unix = 0;  // when it went on
  double seconds = 0;       // how long it was stopped
};

struct TuneState {
  nlohmann::json options;  // tune::to_json(TuneOptions)
  TunePhase phase = TunePhase::New;
  double origin_unix = 0;  // job time 0
  std::vector<Pause> pauses;
  double elapsed_s = 0;  // job time when written
  double profile_s = 0, pilot_s = 0, train_s = 0, restart_s = 0;
  double queue_s = 0;  // launches waiting in the backend's queue
  double spent = 0;  // money so far
  int retries = 0, launches = 0;
  double restart_cost_s = 0;  // the latest measured restart (or the option's guess)
  size_t machine = 0;         // index into the catalog
  common::Layout config;  // on catalog entry `machine`
};

inline constexpr const char* kTuneStateFormat = "tula-tune-state";
inline constexpr int kTuneStateVersion = 1;

nlohmann::json to_json(const TuneState& state);
// A layout as the tune files write it (its machine apart).
nlohmann::json to_json(const common::Layout& config);
common::Layout layout_from_json(const nlohmann::json& j);

// Writes DIR/tune.json atomically.
void write_tune_state(const std::string& dir, const TuneState& state);
// Reads DIR/tune.json; RecordError naming the file and what is wrong (not
// there, not JSON, another format or version, a bad field).
TuneState read_tune_state(const std::string& dir);
// The phase only, for a reader that polls a job another process writes:
// nullopt while there is no readable tune.json (not written yet, or being replaced).
std::optional<TunePhase> read_tune_phase(const std::string& dir);

}  // namespace tula::records
