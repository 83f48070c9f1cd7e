#include "predict/fit.hpp"

#include <set>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict {

std::vector<std::string> FittedModels::all_notes() const {
  std::vector<std::string> out;
  auto add = [&](const std::vector<std::string>& v) { out.insert(out.end(), v.begin(), v.end()); };
  add(compute.notes);
  add(allreduce.notes);
  add(overlap.notes);
  add(memory.notes);
  add(evaluation.notes);
  add(input.notes);
  if (noise) add(noise->notes);
  if (statistical) add(statistical->notes);
  add(notes);
  return out;
}

FittedModels fit_profile(const Profile& p, const NoiseOptions& noise_options, const NoiseGrowth& growth,
                         double epochs_floor_batch) {
  FittedModels m;
  m.compute = fit_compute(p.compute);
  m.allreduce = fit_allreduce(p.allreduce);
  m.overlap = fit_overlap(p.overlap, m.compute, m.allreduce, p.model, p.buckets);
  m.memory = fit_memory(p.memory);
  m.evaluation = fit_evaluation(p.evaluation);
  m.input = fit_input(p.loader, p.input_steps, m.compute, p.hardware.cores);
  if (!p.gradient_noise.empty()) m.noise = estimate_noise_scale(p.gradient_noise, noise_options);

  std::set<int64_t> pilot_batches;
  for (const auto& r : p.pilots) pilot_batches.insert(r.global_batch);
  if (pilot_batches.size() >= 3) {
    m.statistical = fit_statistical_from_pilots(p.pilots, p.target_accuracy);
    if (m.noise) {
      // Two independent routes to B_noise: saying how far apart they are is the
      // check the statistical model offers on itself.
      m.notes.push_back(fmt::format("statistical: pilots give B_noise = {:.3g}, the gradient-noise estimator {:.3g} "
                                    "+- {:.3g} (ratio {:.3g}); the pilot fit is used",
                                    m.statistical->b_noise(), m.noise->b_noise, m.noise->se,
                                    m.statistical->b_noise() / m.noise->b_noise));
    }
  } else if (m.noise && !p.pilots.empty()) {
    m.statistical = calibrate_statistical(*m.noise, p.pilots, p.target_accuracy, growth, epochs_floor_batch);
  } else {
    m.notes.push_back(std::string("statistical: no model (needs ") +
                      (m.noise ? "a pilot run's steps to the target" : "gradient-noise samples and a pilot run, or pilots at 3+ global batches") +
                      "); time-to-accuracy cannot be predicted, only time for a number of epochs");
  }
  return m;
}

nlohmann::json to_json(const FittedModels& m) {
  nlohmann::json j = {{"compute", to_json(m.compute)},
                      {"allreduce", to_json(m.allreduce)},
                      {"overlap", to_json(m.overlap)},
                      {"memory", to_json(m.memory)},
                      {"evaluation", to_json(m.evaluation)},
                      {"input", to_json(m.input)},
                      {"notes", m.notes}};
  if (m.noise) j["noise"] = to_json(*m.noise);
  if (m.statistical) j["statistical"] = to_json(*m.statistical);
  return j;
}

FittedModels fitted_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw ProfileError("fitted: must be an object");
  auto need = [&](const char* key) -> const nlohmann::json& {
    if (!j.contains(key)) throw ProfileError(std::string("fitted.") + key + ": missing");
    return j.at(key);
  };
  FittedModels m;
  m.compute = compute_model_from_json(need("compute"), "fitted.compute");
  m.allreduce = allreduce_model_from_json(need("allreduce"), "fitted.allreduce");
  m.overlap = overlap_model_from_json(need("overlap"), "fitted.overlap");
  m.memory = memory_model_from_json(need("memory"), "fitted.memory");
  m.evaluation = evaluation_model_from_json(need("evaluation"), "fitted.evaluation");
  // Profiles fitted before the input was timed have no "input": it costs nothing.
  if (j.contains("input")) m.input = input_model_from_json(j.at("input"), "fitted.input");
  if (j.contains("noise")) m.noise = noise_estimate_from_json(j.at("noise"), "fitted.noise");
  if (j.contains("statistical")) m.statistical = statistical_model_from_json(j.at("statistical"), "fitted.statistical");
  m.notes = j.value("notes", std::vector<std::string>{});
  return m;
}

}  // namespace tula::predict
