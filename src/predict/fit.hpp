// Fitting every model of a profile at once, and the fitted parameters' JSON
// (the profile's "fitted" section).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "predict/allreduce_model.hpp"
#include "predict/compute_model.hpp"
#include "predict/evaluation_model.hpp"
#include "predict/input_model.hpp"
#include "predict/memory_model.hpp"
#include "predict/noise_scale.hpp"
#include "predict/overlap_model.hpp"
#include "predict/profile.hpp"
#include "predict/statistical_model.hpp"

namespace tula::predict {

struct FittedModels {
  ComputeModel compute;
  AllreduceModel allreduce;
  OverlapModel overlap;
  MemoryModel memory;
  EvaluationModel evaluation;
  InputModel input;                                // not measured: the input costs nothing
  std::optional<NoiseEstimate> noise;              // when the profile has gradient-noise samples
  std::optional<StatisticalModel> statistical;     // when it also has pilots (or 3+ pilot batches)
  std::vector<std::string> notes;                  // profile-level notes (e.g. which statistical path)

  // Every note of every model: the assumptions made and fallbacks taken.
  std::vector<std::string> all_notes() const;
};

// Throws FitError naming the sample set that cannot support its model.
// `growth`: how the calibrated statistical model grows the noise estimate
// over the job (noise_growth.hpp); none by default. `epochs_floor_batch` > 0:
// the calibrated model needs no fewer epochs below that batch than at it
// (steps_per_min_step); 0 by default.
FittedModels fit_profile(const Profile& profile, const NoiseOptions& noise = {}, const NoiseGrowth& growth = {},
                         double epochs_floor_batch = 0);

nlohmann::json to_json(const FittedModels& m);
FittedModels fitted_from_json(const nlohmann::json& j);  // throws ProfileError naming fitted.*

}  // namespace tula::predict
