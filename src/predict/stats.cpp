#include "predict/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "predict/error.hpp"

namespace tula::predict {

int ParamBlock::index(const std::string& name) const {
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  throw std::out_of_range("no parameter named '" + name + "'");
}

double ParamBlock::se(int i) const { return std::sqrt(std::max(0.0, cov(i, i))); }

std::pair<double, double> ParamBlock::interval(const std::string& name, double level) const {
  const int i = index(name);
  const double t = student_t_quantile(0.5 + level / 2, dof);
  return {value(i) - t * se(i), value(i) + t * se(i)};
}

ParamBlock weighted_least_squares(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                  std::vector<std::string> names, const std::string& what) {
  const auto n = x.rows(), p = x.cols();
  if (n < p) {
    throw FitError(what + ": " + std::to_string(n) + " points cannot determine " + std::to_string(p) +
                   " parameters; measure more distinct points");
  }
  const Eigen::VectorXd sw = w.array().sqrt();
  const Eigen::MatrixXd xw = sw.asDiagonal() * x;
  const Eigen::VectorXd yw = sw.cwiseProduct(y);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(xw);
  if (qr.rank() < p) {
    throw FitError(what + ": the points do not separate the " + std::to_string(p) +
                   " parameters (all at the same setting?); measure at more distinct settings");
  }
  ParamBlock out;
  out.names = std::move(names);
  out.value = qr.solve(yw);
  out.points = static_cast<int>(n);
  out.dof = static_cast<int>(n - p);
  const Eigen::VectorXd r = yw - xw * out.value;
  const double s2 = out.dof > 0 ? r.squaredNorm() / out.dof : 0.0;
  out.residual_sd = std::sqrt(s2);
  const Eigen::MatrixXd xtx = xw.transpose() * xw;
  out.cov = s2 * xtx.ldlt().solve(Eigen::MatrixXd::Identity(p, p));
  return out;
}

Eigen::VectorXd relative_weights(const Eigen::VectorXd& y) {
  Eigen::VectorXd w(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i) w(i) = 1.0 / std::max(y(i) * y(i), 1e-300);
  return w;
}

double median(std::vector<double> v) {
  if (v.empty()) throw std::invalid_argument("median of no values");
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, 0.5);
}

double sorted_quantile(const std::vector<double>& s, double q) {
  if (s.empty()) throw std::invalid_argument("quantile of no values");
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal quantile outside (0, 1)");
  double lo = -40, hi = 40;  // bisection on the CDF: slow but exact and used rarely
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

namespace {

// Continued fraction of the regularized incomplete beta function, evaluated by
// the modified Lentz method (Press et al., Numerical Recipes, sec. 6.4).
double beta_continued_fraction(double a, double b, double x) {
  constexpr double tiny = 1e-300;
  double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
  d = 1.0 / (std::abs(d) < tiny ? tiny : d);
  double h = d;
  for (int m = 1; m <= 500; ++m) {
    const double m2 = 2.0 * m;
    double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
    d = 1.0 + aa * d;
    d = 1.0 / (std::abs(d) < tiny ? tiny : d);
    c = 1.0 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    h *= d * c;
    aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
    d = 1.0 + aa * d;
    d = 1.0 / (std::abs(d) < tiny ? tiny : d);
    c = 1.0 + aa / c;
    if (std::abs(c) < tiny) c = tiny;
    const double delta = d * c;
    h *= delta;
    if (std::abs(delta - 1.0) < 1e-15) break;
  }
  return h;
}

double regularized_beta(double a, double b, double x) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) +
                                b * std::log1p(-x));
  if (x < (a + 1) / (a + b + 2)) return front * beta_continued_fraction(a, b, x) / a;
  return 1.0 - front * beta_continued_fraction(b, a, 1 - x) / b;
}

}  // namespace

double student_t_cdf(double t, double dof) {
  const double tail = 0.5 * regularized_beta(dof / 2, 0.5, dof / (dof + t * t));
  return t >= 0 ? 1 - tail : tail;
}

double student_t_quantile(double p, double dof) {
  if (!(dof > 0) || std::isinf(dof) || dof > 1e6) return normal_quantile(p);
  if (!(p > 0 && p < 1)) throw std::invalid_argument("t quantile outside (0, 1)");
  if (p == 0.5) return 0;
  const double target = std::max(p, 1 - p);
  double lo = 0, hi = 1;
  while (student_t_cdf(hi, dof) < target) hi *= 2;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (student_t_cdf(mid, dof) < target ? lo : hi) = mid;
  }
  const double q = (lo + hi) / 2;
  return p < 0.5 ? -q : q;
}

Eigen::MatrixXd draw_parameters(const ParamBlock& block, int draws, std::mt19937_64& rng) {
  const int p = block.size();
  Eigen::MatrixXd out(draws, p);
  for (int k = 0; k < draws; ++k) out.row(k) = block.value.transpose();
  if (block.dof <= 0 || p == 0) return out;
  // A symmetric square root by eigen-decomposition tolerates a singular
  // covariance (a parameter held fixed) where a Cholesky factor would fail.
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(block.cov);
  const Eigen::MatrixXd root =
      eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal() * eig.eigenvectors().transpose();
  std::normal_distribution<double> normal;
  std::chi_squared_distribution<double> chi2(block.dof);
  Eigen::VectorXd z(p);
  for (int k = 0; k < draws; ++k) {
    for (int i = 0; i < p; ++i) z(i) = normal(rng);
    const double scale = std::sqrt(block.dof / chi2(rng));
    out.row(k) += (scale * (root * z)).transpose();
  }
  return out;
}

nlohmann::json to_json(const ParamBlock& b) {
  nlohmann::json values = nlohmann::json::object(), errors = nlohmann::json::object();
  nlohmann::json cov = nlohmann::json::array();
  for (int i = 0; i < b.size(); ++i) {
    values[b.names[i]] = b.value(i);
    errors[b.names[i]] = b.se(i);
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < b.size(); ++j) row.push_back(b.cov(i, j));
    cov.push_back(row);
  }
  return {{"names", b.names}, {"values", values}, {"stderr", errors}, {"covariance", cov},
          {"dof", b.dof}, {"points", b.points}, {"residual_sd", b.residual_sd}};
}

ParamBlock param_block_from_json(const nlohmann::json& j, const std::string& path) {
  auto need = [&](const char* key) -> const nlohmann::json& {
    if (!j.is_object() || !j.contains(key)) throw ProfileError(path + "." + key + ": missing");
    return j.at(key);
  };
  ParamBlock b;
  try {
    b.names = need("names").get<std::vector<std::string>>();
    const auto& values = need("values");
    const auto& cov = need("covariance");
    const auto p = static_cast<Eigen::Index>(b.names.size());
    b.value.resize(p);
    b.cov.resize(p, p);
    if (!cov.is_array() || cov.size() != b.names.size()) {
      throw ProfileError(path + ".covariance: must be a " + std::to_string(p) + "x" + std::to_string(p) + " matrix");
    }
    for (Eigen::Index i = 0; i < p; ++i) {
      if (!values.contains(b.names[i])) throw ProfileError(path + ".values." + b.names[i] + ": missing");
      b.value(i) = values.at(b.names[i]).get<double>();
      if (!cov[i].is_array() || cov[i].size() != b.names.size()) {
        throw ProfileError(path + ".covariance[" + std::to_string(i) + "]: wrong length");
      }
      for (Eigen::Index k = 0; k < p; ++k) b.cov(i, k) = cov[i][k].get<double>();
    }
    b.dof = need("dof").get<int>();
    b.points = j.value("points", 0);
    b.residual_sd = j.value("residual_sd", 0.0);
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": " + e.what());
  }
  return b;
}

ParamBlock model_params_from_json(const nlohmann::json& model, const std::string& path,
                                  const std::vector<std::string>& names) {
  if (!model.is_object() || !model.contains("params")) throw ProfileError(path + ".params: missing");
  ParamBlock params = param_block_from_json(model.at("params"), path + ".params");
  if (params.size() != static_cast<int>(names.size())) {
    std::string expected;
    for (const auto& name : names) expected += (expected.empty() ? "" : " and ") + name;
    throw ProfileError(path + ".params: expected " + expected);
  }
  return params;
}

}  // namespace tula::predict
