// Time of one evaluation pass over the test set, sharded over N workers:
//   t_eval = e0 + e1 * ceil(test_samples / N)
// (fixed cost plus forward time per sample per worker). With fewer than three
// measured shard sizes it is fitted through the origin; with none, forward is
// taken as a third of forward+backward (backward costs about twice forward:
// two matrix products per layer against one) at the training batch.
#pragma once
#include <string>
#include <vector>

#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

enum class EvaluationSource { Linear, Proportional, FromCompute };

struct EvaluationModel {
  EvaluationSource source = EvaluationSource::FromCompute;
  ParamBlock params;  // {"e0", "e1"}; e0 held at 0 when proportional; unused when FromCompute
  std::vector<std::string> notes;

  double seconds(double samples_per_worker, double e0, double e1) const { return e0 + e1 * samples_per_worker; }
};

EvaluationModel fit_evaluation(const std::vector<EvaluationSample>& samples);

nlohmann::json to_json(const EvaluationModel& m);
EvaluationModel evaluation_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
