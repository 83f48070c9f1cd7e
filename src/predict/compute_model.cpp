#include "predict/compute_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict {

const char* to_string(ComputeShape s) { return s == ComputeShape::Linear ? "linear" : "saturating"; }

namespace {

struct Point {
  double b, t;
};

std::string fmt(double v) { return fmt::format("{:.3g}", v); }

ParamBlock fit_linear(const std::vector<Point>& pts) {
  Eigen::MatrixXd x(pts.size(), 2);
  Eigen::VectorXd y(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    x(i, 0) = 1;
    x(i, 1) = pts[i].b;
    y(i) = pts[i].t;
  }
  return weighted_least_squares(x, y, relative_weights(y), {"a", "c"}, "samples.compute");
}

// A model with one parameter held at zero: refit the other alone and give the
// held one zero variance, so draws and intervals leave it fixed.
ParamBlock fit_one_of_two(const std::vector<Point>& pts, bool keep_intercept) {
  Eigen::MatrixXd x(pts.size(), 1);
  Eigen::VectorXd y(pts.size());
  for (size_t i = 0; i < pts.size(); ++i) {
    x(i, 0) = keep_intercept ? 1.0 : pts[i].b;
    y(i) = pts[i].t;
  }
  auto one = weighted_least_squares(x, y, relative_weights(y), {"x"}, "samples.compute");
  ParamBlock out;
  out.names = {"a", "c"};
  out.value = Eigen::Vector2d::Zero();
  out.cov = Eigen::Matrix2d::Zero();
  const int k = keep_intercept ? 0 : 1;
  out.value(k) = one.value(0);
  out.cov(k, k) = one.cov(0, 0);
  out.dof = one.dof;
  out.points = one.points;
  out.residual_sd = one.residual_sd;
  return out;
}

struct Saturating {
  ParamBlock params;
  double b_sat = 0;
  double sse = std::numeric_limits<double>::infinity();
};

// Grid search over the breakpoint (each measured batch size but the last two,
// so at least two points lie on the slope, and the geometric midpoints between
// them); for a fixed breakpoint the model is linear in (t0, c).
Saturating fit_saturating(const std::vector<Point>& pts) {
  std::set<double> bs;
  for (const auto& p : pts) bs.insert(p.b);
  std::vector<double> distinct(bs.begin(), bs.end());
  std::vector<double> candidates;
  for (size_t i = 0; i + 2 < distinct.size(); ++i) {
    candidates.push_back(distinct[i]);
    candidates.push_back(std::sqrt(distinct[i] * distinct[i + 1]));
  }
  Saturating best;
  Eigen::MatrixXd x(pts.size(), 2);
  Eigen::VectorXd y(pts.size());
  for (double bs_try : candidates) {
    for (size_t i = 0; i < pts.size(); ++i) {
      x(i, 0) = 1;
      x(i, 1) = std::max(0.0, pts[i].b - bs_try);
      y(i) = pts[i].t;
    }
    ParamBlock fit;
    try {
      fit = weighted_least_squares(x, y, relative_weights(y), {"t0", "c"}, "samples.compute");
    } catch (const FitError&) {
      continue;
    }
    if (fit.value(1) < 0 || fit.value(0) <= 0) continue;
    const Eigen::VectorXd w = relative_weights(y);
    const Eigen::VectorXd r = y - x * fit.value;
    const double sse = (w.array() * r.array().square()).sum();
    if (sse < best.sse) {
      best.sse = sse;
      best.params = fit;
      best.b_sat = bs_try;
    }
  }
  return best;
}

double eval_linear(const ParamBlock& p, double b) { return p.value(0) + p.value(1) * b; }
double eval_saturating(const Saturating& s, double b) {
  return s.params.value(0) + s.params.value(1) * std::max(0.0, b - s.b_sat);
}

// Leave-one-out relative RMS error: each batch size predicted by a fit that
// never saw it, which is the error that matters for batch sizes not profiled.
template <typename Fit, typename Eval>
double leave_one_out(const std::vector<Point>& pts, Fit&& fit, Eval&& eval) {
  double sum = 0;
  int n = 0;
  for (size_t k = 0; k < pts.size(); ++k) {
    std::vector<Point> rest;
    for (size_t i = 0; i < pts.size(); ++i) {
      if (pts[i].b != pts[k].b) rest.push_back(pts[i]);
    }
    try {
      const auto f = fit(rest);
      const double e = (eval(f, pts[k].b) - pts[k].t) / pts[k].t;
      if (!std::isfinite(e)) return std::numeric_limits<double>::infinity();
      sum += e * e;
      ++n;
    } catch (const FitError&) {
      return std::numeric_limits<double>::infinity();
    }
  }
  return n ? std::sqrt(sum / n) : std::numeric_limits<double>::infinity();
}

}  // namespace

namespace {

// Linear, with the sign checks: time must not fall as the batch grows.
void fit_line(const std::vector<Point>& base, ComputeModel& m) {
  auto lin = fit_linear(base);
  if (lin.value(1) < 0) {
    const double c = lin.value(1), se = lin.se(1);
    if (c + 2 * se < 0) {
      throw FitError("samples.compute: forward+backward time falls as the batch grows (slope " + fmt(c) + " +- " +
                     fmt(se) + " s/sample, more than two standard errors below zero); the measurements are "
                     "inconsistent (warm-up, throttling, another load?): profile again");
    }
    lin = fit_one_of_two(base, true);
    m.notes.push_back("compute: fitted slope " + fmt(c) + " +- " + fmt(se) +
                      " s/sample is negative but within two standard errors of zero; using a flat model "
                      "t_c(b) = " + fmt(lin.value(0)) + " s (slope held at 0)");
  } else if (lin.value(0) < 0) {
    const double a = lin.value(0);
    lin = fit_one_of_two(base, false);
    m.notes.push_back("compute: fitted intercept " + fmt(a) + " s is negative (unphysical); refitted through the "
                      "origin, t_c(b) = c b");
  }
  m.shape = ComputeShape::Linear;
  m.params = lin;
  m.loo_linear = leave_one_out(base, fit_linear, eval_linear);
}

// Flat then linear (a device that saturates), where it predicts held-out
// points clearly better than the line.
void consider_saturating(const std::vector<Point>& base, ComputeModel& m) {
  const auto sat = fit_saturating(base);
  if (!std::isfinite(sat.sse)) return;
  m.loo_saturating = leave_one_out(base, fit_saturating, [](const Saturating& s, double b) {
    return std::isfinite(s.sse) ? eval_saturating(s, b) : std::numeric_limits<double>::quiet_NaN();
  });
  // The extra parameter must earn its place: at least 10% less held-out error.
  if (m.loo_saturating >= 0.9 * m.loo_linear) return;
  m.shape = ComputeShape::Saturating;
  m.params = sat.params;
  m.b_sat = sat.b_sat;
  m.notes.push_back("compute: flat-then-linear fit chosen (held-out error " + fmt(100 * m.loo_saturating) + "% vs " +
                    fmt(100 * m.loo_linear) + "% linear); the device saturates near b = " + fmt(sat.b_sat) +
                    "; its uncertainty is conditional on that breakpoint");
}

// The optimizer step: independent of the batch, so one mean over the batch sizes.
void fit_optimizer(std::vector<double> opt, ComputeModel& m) {
  if (opt.empty()) {
    m.optimizer.names = {"t_opt"};
    m.optimizer.value = Eigen::VectorXd::Zero(1);
    m.optimizer.cov = Eigen::MatrixXd::Zero(1, 1);
    m.notes.push_back("compute: no optimizer_s measured; the optimizer step is taken as part of forward_backward_s");
    return;
  }
  Eigen::VectorXd y = Eigen::Map<Eigen::VectorXd>(opt.data(), static_cast<Eigen::Index>(opt.size()));
  m.optimizer = weighted_least_squares(Eigen::MatrixXd::Ones(y.size(), 1), y, relative_weights(y), {"t_opt"},
                                       "samples.compute.optimizer_s");
}

// Contention: slowdown with k workers per node relative to one; for each
// measured k, gamma_k fitted through the origin on (k - 1, t_k / t_1(b) - 1).
void fit_contention(const std::vector<ComputeSample>& samples, ComputeModel& m) {
  std::vector<std::pair<int64_t, double>> slow;
  for (const auto& s : samples) {
    if (s.workers_per_node <= 1) continue;
    const double b = static_cast<double>(s.batch_per_worker);
    slow.push_back({s.workers_per_node, median(s.forward_backward_s) / m.forward_backward(b) - 1});
  }
  if (slow.empty()) {
    m.contention.names = {"gamma"};
    m.contention.value = Eigen::VectorXd::Zero(1);
    m.contention.cov = Eigen::MatrixXd::Zero(1, 1);
    m.notes.push_back("contention: no samples with several workers per node; assumed none (right for one "
                      "worker per GPU, optimistic for CPU workers sharing cores and memory bandwidth)");
    return;
  }
  for (const auto& [k, ratio] : slow) m.contention_at.push_back(static_cast<double>(k));
  std::sort(m.contention_at.begin(), m.contention_at.end());
  m.contention_at.erase(std::unique(m.contention_at.begin(), m.contention_at.end()), m.contention_at.end());
  const auto column = [&](int64_t k) {
    return std::lower_bound(m.contention_at.begin(), m.contention_at.end(), static_cast<double>(k)) -
           m.contention_at.begin();
  };
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(slow.size()),
                                            static_cast<Eigen::Index>(m.contention_at.size()));
  Eigen::VectorXd y(slow.size());
  for (size_t i = 0; i < slow.size(); ++i) {
    x(static_cast<Eigen::Index>(i), column(slow[i].first)) = static_cast<double>(slow[i].first - 1);
    y(static_cast<Eigen::Index>(i)) = slow[i].second;
  }
  std::vector<std::string> names;
  for (const double k : m.contention_at) names.push_back(fmt::format("gamma_k{}", static_cast<int64_t>(k)));
  m.contention = weighted_least_squares(x, y, Eigen::VectorXd::Ones(y.size()), names, "samples.compute (contention)");
  m.contention_measured = true;
  for (int j = 0; j < m.contention.size(); ++j) {
    if (m.contention.value(j) >= 0) continue;
    m.notes.push_back("contention: fitted " + names[static_cast<size_t>(j)] + " " + fmt(m.contention.value(j)) +
                      " < 0 (workers sped each other up); held at 0");
    m.contention.value(j) = 0;
  }
}

}  // namespace

ComputeModel fit_compute(const std::vector<ComputeSample>& samples) {
  ComputeModel m;
  std::vector<Point> base;
  std::vector<double> opt;
  for (const auto& s : samples) {
    if (s.workers_per_node != 1) continue;
    base.push_back({static_cast<double>(s.batch_per_worker), median(s.forward_backward_s)});
    if (!s.optimizer_s.empty()) opt.push_back(median(s.optimizer_s));
  }
  std::set<double> distinct;
  for (const auto& p : base) distinct.insert(p.b);
  if (static_cast<int>(distinct.size()) < kMinComputePoints) {
    throw FitError(fmt::format(
        "samples.compute: {} distinct per-worker batch sizes with one worker per node; at least {} are needed",
        distinct.size(), kMinComputePoints));
  }
  fit_line(base, m);
  if (static_cast<int>(distinct.size()) >= kMinSaturatingPoints) consider_saturating(base, m);
  fit_optimizer(std::move(opt), m);
  fit_contention(samples, m);
  return m;
}

double ComputeModel::contention_factor(double k, std::span<const double> gammas) const {
  if (gammas.empty() || k <= 1) return 1.0;
  const auto slowdown = [](double workers, double gamma) { return 1 + gamma * (workers - 1); };
  if (contention_at.empty()) return slowdown(k, gammas.front());
  const size_t n = std::min(contention_at.size(), gammas.size());
  double lo_k = 1, lo_s = 1;
  for (size_t j = 0; j < n; ++j) {
    const double at = contention_at[j], s = slowdown(at, gammas[j]);
    if (k <= at) return lo_s + (s - lo_s) * (k - lo_k) / (at - lo_k);
    lo_k = at;
    lo_s = s;
  }
  return slowdown(k, gammas[n - 1]);
}

double ComputeModel::contention_factor(double k) const {
  return contention_factor(k, std::span<const double>(contention.value.data(), contention.value.size()));
}

nlohmann::json to_json(const ComputeModel& m) {
  return {{"shape", to_string(m.shape)},       {"params", to_json(m.params)},
          {"b_sat", m.b_sat},                  {"loo_linear", m.loo_linear},
          {"loo_saturating", m.loo_saturating}, {"optimizer", to_json(m.optimizer)},
          {"contention", to_json(m.contention)}, {"contention_at", m.contention_at},
          {"contention_measured", m.contention_measured},
          {"notes", m.notes}};
}

ComputeModel compute_model_from_json(const nlohmann::json& j, const std::string& path) {
  ComputeModel m;
  try {
    const auto shape = j.at("shape").get<std::string>();
    if (shape != "linear" && shape != "saturating") throw ProfileError(path + ".shape: unknown '" + shape + "'");
    m.shape = shape == "linear" ? ComputeShape::Linear : ComputeShape::Saturating;
    m.params = param_block_from_json(j.at("params"), path + ".params");
    m.b_sat = j.value("b_sat", 0.0);
    m.loo_linear = j.value("loo_linear", 0.0);
    m.loo_saturating = j.value("loo_saturating", -1.0);
    m.optimizer = param_block_from_json(j.at("optimizer"), path + ".optimizer");
    m.contention = param_block_from_json(j.at("contention"), path + ".contention");
    m.contention_at = j.value("contention_at", std::vector<double>{});
    m.contention_measured = j.value("contention_measured", false);
    m.notes = j.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": " + e.what());
  }
  if (m.params.size() != 2) throw ProfileError(path + ".params: expected 2 parameters");
  if (m.contention.size() < 1 || (!m.contention_at.empty() && m.contention_at.size() != static_cast<size_t>(m.contention.size()))) {
    throw ProfileError(path + ".contention_at: one worker count per contention parameter expected");
  }
  return m;
}

}  // namespace tula::predict
