#include "records/tune_state.hpp"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "common/atomic_file.hpp"
#include "records/record_error.hpp"

namespace tula::records {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string state_path(const std::string& dir) { return (fs::path(dir) / "tune.json").string(); }

TunePhase phase_from(const json& j) {
  const std::string text = j.at("phase").get<std::string>();
  const auto phase = tune_phase_from_string(text);
  if (!phase) throw RecordError("phase \"" + text + "\" is not a tune phase");
  return *phase;
}

}  // namespace

json to_json(const common::Layout& c) {
  return {{"nodes", c.nodes},
          {"workers_per_node", c.workers_per_node},
          {"batch_per_worker", c.batch_per_worker},
          {"accumulation_steps", c.accumulation_steps}};
}

common::Layout layout_from_json(const json& j) {
  common::Layout c;
  c.nodes = j.at("nodes").get<int64_t>();
  c.workers_per_node = j.at("workers_per_node").get<int64_t>();
  c.batch_per_worker = j.at("batch_per_worker").get<int64_t>();
  c.accumulation_steps = j.at("accumulation_steps").get<int64_t>();
  return c;
}

json to_json(const TuneState& s) {
  json pauses = json::array();
  for (const auto& p : s.pauses) pauses.push_back({p.resumed_unix, p.seconds});
  return {{"format", kTuneStateFormat},
          {"version", kTuneStateVersion},
          {"options", s.options},
          {"phase", to_string(s.phase)},
          {"origin_unix", s.origin_unix},
          {"pauses", pauses},
          {"elapsed_s", s.elapsed_s},
          {"profile_s", s.profile_s},
          {"pilot_s", s.pilot_s},
          {"train_s", s.train_s},
          {"restart_s", s.restart_s},
          {"queue_s", s.queue_s},
          {"spent", s.spent},
          {"retries", s.retries},
          {"launches", s.launches},
          {"restart_cost_s", s.restart_cost_s},
          {"machine", s.machine},
          {"config", to_json(s.config)}};
}

void write_tune_state(const std::string& dir, const TuneState& state) {
  common::write_file_atomically(state_path(dir), to_json(state).dump(2) + "\n");
}

TuneState read_tune_state(const std::string& dir) {
  const std::string path = state_path(dir);
  std::ifstream in(path);
  if (!in) throw RecordError(path + ": not there");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    throw RecordError(path + " is not readable JSON (" + e.what() + ")");
  }
  if (!j.is_object() || j.value("format", "") != kTuneStateFormat || j.value("version", 0) != kTuneStateVersion) {
    throw RecordError(
        fmt::format("{} is not a tula tune state (format {}, version {})", path, kTuneStateFormat, kTuneStateVersion));
  }
  try {
    TuneState s;
    s.options = j.at("options");
    s.phase = phase_from(j);
    s.origin_unix = j.at("origin_unix").get<double>();
    for (const auto& p : j.value("pauses", json::array())) s.pauses.push_back({p.at(0).get<double>(), p.at(1).get<double>()});
    s.elapsed_s = j.at("elapsed_s").get<double>();
    s.profile_s = j.value("profile_s", 0.0);
    s.pilot_s = j.value("pilot_s", 0.0);
    s.train_s = j.value("train_s", 0.0);
    s.restart_s = j.value("restart_s", 0.0);
    s.queue_s = j.value("queue_s", 0.0);
    s.spent = j.value("spent", 0.0);
    s.retries = j.value("retries", 0);
    s.launches = j.value("launches", 0);
    s.restart_cost_s = j.value("restart_cost_s", 0.0);
    s.machine = j.value("machine", size_t{0});
    if (j.contains("config")) s.config = layout_from_json(j.at("config"));
    return s;
  } catch (const json::exception& e) {
    throw RecordError(path + ": " + e.what());
  } catch (const RecordError& e) {
    throw RecordError(path + ": " + e.what());
  }
}

std::optional<TunePhase> read_tune_phase(const std::string& dir) {
  std::ifstream in(state_path(dir));
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    return tune_phase_from_string(j.value("phase", ""));
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

}  // namespace tula::records
