#include "profile/pilot.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "predict/error.hpp"
#include "predict/noise_scale.hpp"

namespace tula::profile {

PilotMetrics read_pilot_metrics(const std::vector<std::string>& paths, double target_accuracy) {
  PilotMetrics out;
  std::map<int64_t, std::vector<double>> steps_at;  // global batch -> steps to target per run
  for (const auto& path : paths) {
    std::ifstream in(path);
    if (!in) throw predict::ProfileError("cannot open metrics file " + path);
    std::stringstream text;
    text << in.rdbuf();
    try {
      std::istringstream lines(text.str());
      auto noise = predict::read_noise_samples(lines);
      out.noise.insert(out.noise.end(), noise.begin(), noise.end());
    } catch (const predict::ProfileError& e) {
      throw predict::ProfileError(path + ": " + e.what());
    }
    if (target_accuracy <= 0) continue;
    int64_t global_batch = 0;
    double reached_at = -1, best = 0;
    std::istringstream lines(text.str());
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (line.empty()) continue;
      nlohmann::json r;
      try {
        r = nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception&) {
        throw predict::ProfileError(path + ":" + std::to_string(number) + ": not a JSON object");
      }
      const auto type = r.value("type", "");
      if (type == "start") global_batch = r.value("global_batch", int64_t{0});
      // Epoch-end evaluations, and the finer ones of `tula train --eval-every`.
      if ((type == "epoch" || type == "eval") && r.contains("test_accuracy") && reached_at < 0) {
        const double acc = r.at("test_accuracy").get<double>();
        best = std::max(best, acc);
        if (acc >= target_accuracy) reached_at = r.value("step", 0.0);
      }
    }
    if (global_batch <= 0) {
      out.notes.push_back(path + ": no start record with the global batch; not used as a pilot");
    } else if (reached_at <= 0) {
      out.notes.push_back(path + ": never reached " + std::to_string(target_accuracy) + " test accuracy (best " +
                          std::to_string(best) + "); not used as a pilot");
    } else {
      steps_at[global_batch].push_back(reached_at);
    }
  }
  for (auto& [batch, steps] : steps_at) out.pilots.push_back({batch, steps});
  return out;
}

}  // namespace tula::profile
