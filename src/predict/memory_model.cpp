#include "predict/memory_model.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict {

namespace {
double upper(const ParamBlock& p, double b, double t) {
  Eigen::Vector2d x(1.0, b);
  const double var = x.dot(p.cov * x) + p.residual_sd * p.residual_sd;
  return p.value(0) + p.value(1) * b + t * std::sqrt(std::max(0.0, var));
}
double quantile_for(const ParamBlock& p, double level) { return p.dof > 0 ? student_t_quantile(level, p.dof) : 0.0; }
}  // namespace

double MemoryModel::upper_bytes(double b, double level) const { return upper(params, b, quantile_for(params, level)); }

int64_t MemoryModel::max_batch(double capacity, double level) const {
  const double t = quantile_for(params, level);  // once: the quantile is the costly part
  auto fits = [&](int64_t b) { return upper(params, static_cast<double>(b), t) <= capacity; };
  if (!fits(1)) return 0;
  // The bound grows with b (m_act >= 0 and the variance is a convex quadratic
  // in b), so doubling then bisection finds the last b that fits.
  int64_t lo = 1, hi = 2;
  constexpr int64_t cap = int64_t{1} << 40;
  while (hi < cap && fits(hi)) lo = hi, hi *= 2;
  if (hi >= cap) return cap;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

AccumulationPlan split_for_memory(int64_t batch, int64_t max_batch, const std::string& device) {
  if (max_batch < 1) {
    throw InfeasibleError("memory: not even a batch of 1 fits " + device +
                          " (the model's weights, gradients and optimizer state plus one sample's activations exceed it)");
  }
  if (batch < 1) throw std::invalid_argument("batch must be at least 1");
  AccumulationPlan plan;
  plan.steps = (batch + max_batch - 1) / max_batch;
  plan.micro_batch = (batch + plan.steps - 1) / plan.steps;
  return plan;
}

MemoryModel fit_memory(const std::vector<MemorySample>& samples) {
  std::set<int64_t> distinct;
  for (const auto& s : samples) distinct.insert(s.batch);
  if (static_cast<int>(distinct.size()) < kMinMemoryPoints) {
    throw FitError(fmt::format("samples.memory: {} distinct batch sizes; at least {} are needed", distinct.size(),
                               kMinMemoryPoints));
  }
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = 1;
    x(i, 1) = static_cast<double>(samples[static_cast<size_t>(i)].batch);
    y(i) = static_cast<double>(samples[static_cast<size_t>(i)].bytes);
  }
  MemoryModel m;
  m.params = weighted_least_squares(x, y, Eigen::VectorXd::Ones(n), {"m_static", "m_act"}, "samples.memory");
  const double slope = m.params.value(1), se = m.params.se(1);
  if (slope < 0) {
    if (slope + 2 * se < 0) {
      throw FitError(fmt::format("samples.memory: memory falls as the batch grows ({:g} +- {:g} bytes/sample); these "
                                 "are not peak memories of the same model: profile again",
                                 slope, se));
    }
    auto flat = weighted_least_squares(x.col(0), y, Eigen::VectorXd::Ones(n), {"m"}, "samples.memory");
    m.params.value << flat.value(0), 0.0;
    m.params.cov = Eigen::Matrix2d::Zero();
    m.params.cov(0, 0) = flat.cov(0, 0);
    m.params.dof = flat.dof;
    m.params.residual_sd = flat.residual_sd;
    m.notes.push_back("memory: activation bytes per sample fitted slightly negative (within noise); held at 0");
  }
  if (m.params.value(0) < 0) {
    m.notes.push_back("memory: fitted static memory is negative (the samples curve upward?); predictions at small "
                      "batches are unreliable");
  }
  return m;
}

nlohmann::json to_json(const MemoryModel& m) { return {{"params", to_json(m.params)}, {"notes", m.notes}}; }

MemoryModel memory_model_from_json(const nlohmann::json& j, const std::string& path) {
  MemoryModel m;
  m.params = model_params_from_json(j, path, {"m_static", "m_act"});
  m.notes = j.value("notes", std::vector<std::string>{});
  return m;
}

}  // namespace tula::predict
