#include "predict/input_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/text.hpp"
#include "predict/error.hpp"

namespace tula::predict {
namespace {

// Median and its standard error (the spread of the values over their count's
// root: the values are repeated measurements of one quantity).
struct Estimate {
  double value = 0, se = 0;
  int count = 0;
};

Estimate estimate(const std::vector<double>& v) {
  Estimate e;
  e.count = static_cast<int>(v.size());
  if (v.empty()) return e;
  e.value = median(v);
  if (v.size() < 2) return e;
  double mean = 0;
  for (const double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double ss = 0;
  for (const double x : v) ss += (x - mean) * (x - mean);
  e.se = std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  return e;
}

}  // namespace

double InputModel::loaders(double workers_per_node, const MachineSpec& m) const {
  if (m.device_kind != "cpu") return workers_per_node;
  const double node_cores = static_cast<double>(m.max_workers_per_node);
  const double parallel = std::max(1.0, std::floor(node_cores / static_cast<double>(std::max<int64_t>(1, threads))));
  return std::min(workers_per_node, parallel);
}

double InputModel::seconds(double batch, double workers_per_node, double s, const MachineSpec& m) const {
  if (!measured) return 0;
  return batch * workers_per_node * s / (loaders(workers_per_node, m) * m.relative_speed);
}

InputModel fit_input(const std::vector<LoaderSample>& loader, const std::vector<InputStepSample>& steps,
                     const ComputeModel& compute, int64_t cores) {
  InputModel m;
  m.params.names = {"seconds_per_sample", "exposed"};
  m.params.value = Eigen::Vector2d(0, 1);
  m.params.cov = Eigen::Matrix2d::Zero();
  m.cores = std::max<int64_t>(1, cores);
  if (loader.empty()) {
    m.notes.push_back("input: the loader was not timed; reading and decoding are taken to cost nothing");
    return m;
  }
  std::vector<double> per_sample;
  for (const auto& l : loader) {
    m.threads = std::max(m.threads, l.threads);
    for (const double t : l.seconds) per_sample.push_back(t / static_cast<double>(l.batch));
  }
  const auto s = estimate(per_sample);
  m.measured = true;
  m.params.value(0) = s.value;
  m.params.cov(0, 0) = s.se * s.se;
  m.params.points = s.count;
  m.params.dof = std::max(1, s.count - 1);

  std::vector<double> exposed;
  for (const auto& st : steps) {
    const double b = static_cast<double>(st.batch);
    const double t_c = compute.forward_backward(b) + compute.optimizer.value(0);
    const double t_in = b * s.value;
    for (const double step : st.step_s) exposed.push_back((step - t_c) / t_in);
  }
  if (exposed.empty()) {
    m.notes.push_back("input: no steps fed by the loader were timed; its time is taken as not hidden (rho = 1)");
    return m;
  }
  const auto rho = estimate(exposed);
  if (rho.value < 0 || rho.value > kMaxExposed) {
    // Where the loader is fast next to a step, its time is within the step's
    // own noise and the ratio can come out anywhere; bounded, it cannot add
    // more than kMaxExposed loader times to a predicted step.
    m.notes.push_back("input: the share of the loader's time the fed steps waited for came out at rho = " +
                      common::format_number(rho.value) + ", outside [0, " + common::format_number(kMaxExposed) +
                      "] (the loader's time is within the steps' noise); held at the bound");
  }
  m.params.value(1) = std::clamp(rho.value, 0.0, kMaxExposed);
  m.params.cov(1, 1) = rho.se * rho.se;
  m.params.points += rho.count;
  return m;
}

nlohmann::json to_json(const InputModel& m) {
  return {{"measured", m.measured}, {"params", to_json(m.params)}, {"threads", m.threads},
          {"cores", m.cores},       {"notes", m.notes}};
}

InputModel input_model_from_json(const nlohmann::json& j, const std::string& path) {
  InputModel m;
  try {
    m.measured = j.at("measured").get<bool>();
    m.params = param_block_from_json(j.at("params"), path + ".params");
    m.threads = j.at("threads").get<int64_t>();
    m.cores = j.at("cores").get<int64_t>();
    m.notes = j.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": " + e.what());
  }
  if (m.params.size() != 2) throw ProfileError(path + ".params: expected seconds_per_sample and exposed");
  if (m.threads < 1 || m.cores < 1) throw ProfileError(path + ": threads and cores must be at least 1");
  return m;
}

}  // namespace tula::predict
