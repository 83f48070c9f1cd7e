#include "predict/evaluation_model.hpp"

#include <cmath>
#include <set>

#include "predict/error.hpp"

namespace tula::predict {

EvaluationModel fit_evaluation(const std::vector<EvaluationSample>& samples) {
  EvaluationModel m;
  m.params.names = {"e0", "e1"};
  m.params.value = Eigen::Vector2d::Zero();
  m.params.cov = Eigen::Matrix2d::Zero();
  if (samples.empty()) {
    m.notes.push_back("evaluation: not measured; forward-only time taken as 1/3 of forward+backward at the "
                      "training batch");
    return m;
  }
  std::set<double> distinct;
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& s = samples[static_cast<size_t>(i)];
    const double per_worker = std::ceil(static_cast<double>(s.samples) / static_cast<double>(s.workers));
    distinct.insert(per_worker);
    x(i, 0) = 1;
    x(i, 1) = per_worker;
    y(i) = median(s.seconds);
  }
  if (distinct.size() >= 3) {
    m.source = EvaluationSource::Linear;
    m.params = weighted_least_squares(x, y, relative_weights(y), {"e0", "e1"}, "samples.evaluation");
    if (m.params.value(0) >= 0 && m.params.value(1) > 0) return m;
    m.notes.push_back("evaluation: linear fit has a negative term; refitted through the origin");
  } else {
    m.notes.push_back("evaluation: fewer than 3 distinct shard sizes; fitted through the origin (no fixed cost)");
  }
  auto prop = weighted_least_squares(x.col(1), y, relative_weights(y), {"e1"}, "samples.evaluation");
  m.source = EvaluationSource::Proportional;
  m.params.value << 0.0, prop.value(0);
  m.params.cov = Eigen::Matrix2d::Zero();
  m.params.cov(1, 1) = prop.cov(0, 0);
  m.params.dof = prop.dof;
  m.params.points = prop.points;
  m.params.residual_sd = prop.residual_sd;
  return m;
}

namespace {
const char* name(EvaluationSource s) {
  switch (s) {
    case EvaluationSource::Linear: return "linear";
    case EvaluationSource::Proportional: return "proportional";
    default: return "from_compute";
  }
}
}  // namespace

nlohmann::json to_json(const EvaluationModel& m) {
  return {{"source", name(m.source)}, {"params", to_json(m.params)}, {"notes", m.notes}};
}

EvaluationModel evaluation_model_from_json(const nlohmann::json& j, const std::string& path) {
  EvaluationModel m;
  try {
    const auto s = j.at("source").get<std::string>();
    if (s == "linear") m.source = EvaluationSource::Linear;
    else if (s == "proportional") m.source = EvaluationSource::Proportional;
    else if (s == "from_compute") m.source = EvaluationSource::FromCompute;
    else throw ProfileError(path + ".source: unknown '" + s + "'");
    m.params = param_block_from_json(j.at("params"), path + ".params");
    m.notes = j.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": " + e.what());
  }
  return m;
}

}  // namespace tula::predict
