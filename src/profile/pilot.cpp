#include "profile/pilot.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "predict/error.hpp"
#include "predict/noise_scale.hpp"

namespace tula::profile {

namespace {

// Steps before this are warm-up (allocator, caches, the first collectives)
// and left out of the pilot's step time.
constexpr size_t kWarmupSteps = 2;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

PilotMetrics read_pilot_metrics(const std::vector<std::string>& paths, double target_accuracy) {
  PilotMetrics out;
  std::map<int64_t, std::vector<double>> steps_at;  // global batch -> steps to target per run
  std::map<int64_t, predict::PilotRun> timing_at;     // global batch -> layout and step times of its runs
  std::map<int64_t, std::vector<double>> step_s_at;
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
    int64_t global_batch = 0, workers = 0, batch_per_worker = 0, accumulation_steps = 1;
    double reached_at = -1, best = 0;
    std::vector<double> step_s;  // seconds per optimizer step until the target
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
      if (type == "start") {
        global_batch = r.value("global_batch", int64_t{0});
        workers = r.value("workers", int64_t{0});
        batch_per_worker = r.value("batch_size", int64_t{0});
        accumulation_steps = r.value("accumulation_steps", int64_t{1});
      }
      if (type == "iter" && reached_at < 0 && r.contains("iter_s")) step_s.push_back(r.at("iter_s").get<double>());
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
      // Runs of one batch with another layout than the first timed one are
      // left out of the step time (it calibrates one configuration).
      const bool layout_known = workers > 0 && batch_per_worker > 0 &&
                                workers * batch_per_worker * accumulation_steps == global_batch;
      if (layout_known && step_s.size() > kWarmupSteps) {
        auto [it, fresh] = timing_at.try_emplace(global_batch);
        if (fresh) {
          it->second.workers = workers;
          it->second.batch_per_worker = batch_per_worker;
          it->second.accumulation_steps = accumulation_steps;
        }
        if (it->second.workers == workers && it->second.batch_per_worker == batch_per_worker) {
          step_s_at[global_batch].push_back(median({step_s.begin() + kWarmupSteps, step_s.end()}));
        }
      }
    }
  }
  for (auto& [batch, steps] : steps_at) {
    predict::PilotRun run;
    if (auto t = timing_at.find(batch); t != timing_at.end()) {
      run = t->second;
      run.seconds_per_step = median(step_s_at[batch]);
    }
    run.global_batch = batch;
    run.steps_to_target = steps;
    out.pilots.push_back(std::move(run));
  }
  return out;
}

}  // namespace tula::profile
