#include "predict/statistical_model.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict {

double steps_per_min_step(double global_batch, double b_noise, double floor_batch) {
  const double b = global_batch;
  return std::max(1.0, floor_batch / b) + b_noise / b;
}

namespace {

// S_min = sum_j x_j S_j / sum_j x_j^2 with x_j = steps_per_min_step(B_j) over
// all repeats: least squares through the origin.
double s_min_at(double bn, const std::vector<PilotRun>& pilots, double floor_batch) {
  double sxy = 0, sxx = 0;
  for (const auto& p : pilots) {
    const double x = steps_per_min_step(static_cast<double>(p.global_batch), bn, floor_batch);
    for (double s : p.steps_to_target) sxy += x * s, sxx += x * x;
  }
  return sxy / sxx;
}

// The B_noise the job meets: the grown read's mean over [0, S_min(B_noise)].
// The mean rises with S_min and S_min falls as B_noise rises, so the two
// cross once; bisection in log B_noise over six decades around the read.
double grown_over_pilots(const NoiseGrowth& growth, const NoiseRead& read, const std::vector<PilotRun>& pilots,
                         double floor_batch) {
  double lo = std::log(read.b_noise) - 3 * std::log(10.0), hi = std::log(read.b_noise) + 3 * std::log(10.0);
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2, bn = std::exp(mid);
    (mean_b_noise(growth, read, 0, s_min_at(bn, pilots, floor_batch)) > bn ? lo : hi) = mid;
  }
  return std::exp((lo + hi) / 2);
}

// The calibration at a given B_noise and its standard error.
StatisticalModel calibrate_at(double bn, double bn_se, int noise_dof, const std::vector<PilotRun>& pilots,
                              double target_accuracy, double floor_batch) {
  StatisticalModel m;
  m.target_accuracy = target_accuracy;
  m.source = "noise+pilot";
  m.epochs_floor_batch = floor_batch;
  // S_min by least squares through the origin (s_min_at), and its variance
  // from the repeats' scatter around the model.
  double sxy = 0, sxx = 0;
  int repeats = 0;
  std::vector<std::pair<double, double>> obs;  // (x, S)
  for (const auto& p : pilots) {
    const double B = static_cast<double>(p.global_batch);
    const double x = steps_per_min_step(B, bn, floor_batch);
    for (double s : p.steps_to_target) {
      sxy += x * s;
      sxx += x * x;
      obs.push_back({x, s});
      ++repeats;
    }
  }
  const double s_min = sxy / sxx;
  double var_s = 0;
  if (repeats >= 2) {
    double ss = 0;
    for (const auto& [x, s] : obs) ss += (s - s_min * x) * (s - s_min * x);
    var_s = ss / (repeats - 1) / sxx;
  } else {
    const double sd = kAssumedPilotSpread * obs[0].second;
    var_s = sd * sd / sxx;
    m.notes.push_back(fmt::format("statistical: one pilot run; a {:g}% run-to-run spread of steps-to-target is "
                                  "assumed (repeat the pilot to measure it)",
                                  100 * kAssumedPilotSpread));
  }
  // dS_min/dB_noise, holding the pilots fixed: differentiate sxy/sxx (dx/dB_noise = 1/B, floor or not).
  double dsxy = 0, dsxx = 0;
  for (const auto& p : pilots) {
    const double B = static_cast<double>(p.global_batch);
    const double x = steps_per_min_step(B, bn, floor_batch);
    for (double s : p.steps_to_target) dsxy += s / B, dsxx += 2 * x / B;
  }
  const double d = (dsxy * sxx - sxy * dsxx) / (sxx * sxx);
  const double var_bn = bn_se * bn_se;
  m.params.names = {"s_min", "b_noise"};
  m.params.value = Eigen::Vector2d(s_min, bn);
  m.params.cov = Eigen::Matrix2d::Zero();
  m.params.cov(0, 0) = var_s + d * d * var_bn;
  m.params.cov(0, 1) = m.params.cov(1, 0) = d * var_bn;
  m.params.cov(1, 1) = var_bn;
  // The noise estimate carries most of the uncertainty; its jackknife dof
  // sets the tails of the parameter draws (at least 1 when the pilots alone
  // give an estimate).
  m.params.dof = std::max(noise_dof, repeats >= 2 ? repeats - 1 : 1);
  m.params.points = repeats;
  return m;
}

}  // namespace

StatisticalModel calibrate_statistical(const NoiseEstimate& noise, const std::vector<PilotRun>& pilots,
                                       double target_accuracy, const NoiseGrowth& growth,
                                       double epochs_floor_batch) {
  if (pilots.empty()) {
    throw FitError("samples.pilots: none; S_min needs at least one pilot run's steps to the target accuracy");
  }
  const bool grow = growth.grows() && noise.progress > 0;
  const double bn = grow ? grown_over_pilots(growth, {noise.b_noise, noise.progress}, pilots, epochs_floor_batch)
                         : noise.b_noise;
  auto m = calibrate_at(bn, noise.se * bn / noise.b_noise, noise.dof, pilots, target_accuracy, epochs_floor_batch);
  m.b_noise_pilot = noise.b_noise;
  m.growth_exponent = grow ? growth.exponent : 0.0;
  std::string note = fmt::format(
      "statistical: S_min = {:.3g} steps (E_min = {:.3g} examples) calibrated from {} pilot run(s) with B_noise = {:.3g}",
      m.s_min(), m.e_min(), m.params.points, bn);
  if (grow) {
    note += fmt::format(", the mean over the job of the gradient-noise estimator's {:.3g} (read at {:.3g} minimum "
                        "steps) grown as (s / s0)^{:.3g}",
                        noise.b_noise, noise.progress, growth.exponent);
  } else {
    note += " from the gradient-noise estimator";
  }
  m.notes.push_back(note);
  if (epochs_floor_batch > 0) {
    m.notes.push_back(fmt::format("statistical: below a global batch of {:g} (the rate's reference) no fewer epochs "
                                  "than at it: the law's saving there assumes a rate tuned for each batch",
                                  epochs_floor_batch));
  }
  if (growth.grows() && !grow) {
    m.notes.push_back("statistical: the noise estimate does not say where it was read (an older profile); B_noise "
                      "is taken as read, without growth");
  }
  return m;
}

StatisticalModel fit_statistical_from_pilots(const std::vector<PilotRun>& pilots, double target_accuracy) {
  std::set<int64_t> distinct;
  for (const auto& p : pilots) distinct.insert(p.global_batch);
  if (distinct.size() < 3) {
    throw FitError(fmt::format(
        "samples.pilots: {} distinct global batches; fitting S_min and B_noise from pilots alone needs at least 3",
        distinct.size()));
  }
  std::vector<std::pair<double, double>> obs;
  for (const auto& p : pilots) {
    for (double s : p.steps_to_target) obs.push_back({1.0 / static_cast<double>(p.global_batch), s});
  }
  const auto n = static_cast<Eigen::Index>(obs.size());
  Eigen::MatrixXd x(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    x(i, 0) = 1;
    x(i, 1) = obs[static_cast<size_t>(i)].first;
    y(i) = obs[static_cast<size_t>(i)].second;
  }
  const auto lin = weighted_least_squares(x, y, relative_weights(y), {"s_min", "e_min"}, "samples.pilots");
  const double a = lin.value(0), c = lin.value(1);
  if (!(a > 0) || !(c > 0)) {
    throw FitError(fmt::format("samples.pilots: steps-to-target do not follow S(B) = S_min (1 + B_noise/B): fitted "
                               "S_min = {:g}, E_min = {:g} (both must be positive); larger batches should need fewer "
                               "steps",
                               a, c));
  }
  // (S_min, B_noise) = (a, c / a): delta method, J = [[1, 0], [-c/a^2, 1/a]].
  Eigen::Matrix2d jac;
  jac << 1, 0, -c / (a * a), 1 / a;
  StatisticalModel m;
  m.target_accuracy = target_accuracy;
  m.source = "pilots";
  m.params.names = {"s_min", "b_noise"};
  m.params.value = Eigen::Vector2d(a, c / a);
  m.params.cov = jac * lin.cov * jac.transpose();
  m.params.dof = lin.dof;
  m.params.points = lin.points;
  m.params.residual_sd = lin.residual_sd;
  m.notes.push_back(fmt::format("statistical: S_min = {:.3g} steps and B_noise = {:.3g} fitted to {} pilot runs at {} "
                                "global batches (B_noise's error by the delta method)",
                                a, c / a, lin.points, distinct.size()));
  return m;
}

nlohmann::json to_json(const StatisticalModel& m) {
  nlohmann::json j = {{"target_accuracy", m.target_accuracy}, {"params", to_json(m.params)}, {"source", m.source},
                      {"e_min", m.e_min()}, {"notes", m.notes}};
  if (m.b_noise_pilot > 0) {
    j["b_noise_pilot"] = m.b_noise_pilot;
    j["b_noise_planned"] = m.b_noise();
    j["growth_exponent"] = m.growth_exponent;
  }
  if (m.epochs_floor_batch > 0) j["epochs_floor_batch"] = m.epochs_floor_batch;
  return j;
}

StatisticalModel statistical_model_from_json(const nlohmann::json& j, const std::string& path) {
  StatisticalModel m;
  try {
    m.target_accuracy = j.at("target_accuracy").get<double>();
    m.params = param_block_from_json(j.at("params"), path + ".params");
    m.source = j.at("source").get<std::string>();
    m.notes = j.value("notes", std::vector<std::string>{});
    m.b_noise_pilot = j.value("b_noise_pilot", 0.0);
    m.growth_exponent = j.value("growth_exponent", 0.0);
    m.epochs_floor_batch = j.value("epochs_floor_batch", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": " + e.what());
  }
  if (m.params.size() != 2 || !(m.s_min() > 0) || !(m.b_noise() > 0)) {
    throw ProfileError(path + ".params: expected positive s_min and b_noise");
  }
  return m;
}

}  // namespace tula::predict
