#include "predict/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <fmt/format.h>

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
    throw FitError(fmt::format("{}: {} points cannot determine {} parameters; measure more distinct points", what, n, p));
  }
  const Eigen::VectorXd sw = w.array().sqrt();
  const Eigen::MatrixXd xw = sw.asDiagonal() * x;
  const Eigen::VectorXd yw = sw.cwiseProduct(y);
  Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(xw);
  if (qr.rank() < p) {
    throw FitError(fmt::format("{}: the points do not separate the {} parameters (all at the same setting?); measure "
                               "at more distinct settings",
                               what, p));
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

double mean(const std::vector<double>& v) {
  if (v.empty()) throw std::invalid_argument("mean of no values");
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double sorted_quantile(const std::vector<double>& s, double q) {
  if (s.empty()) throw std::invalid_argument("quantile of no values");
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (pos - static_cast<double>(lo)) * (s[hi] - s[lo]);
}

namespace {

// Boost.Math throws on bad arguments and on overflow by default. The quantiles
// check p themselves and throw what the header promises; past that, these
// functions answer with a value rather than throw: NaN where the result is
// undefined (the CDF at dof <= 0, as the header says), +-inf for a quantile
// beyond the range of a double (p within about 1e-308 of 0 or 1 at dof 1).
namespace policies = boost::math::policies;
using Policy = policies::policy<policies::domain_error<policies::ignore_error>,
                                policies::overflow_error<policies::ignore_error>>;

}  // namespace

double normal_quantile(double p) {
  if (!(p > 0 && p < 1)) throw std::invalid_argument("normal quantile outside (0, 1)");
  return boost::math::quantile(boost::math::normal_distribution<double, Policy>(), p);
}

double normal_cdf(double z) { return boost::math::cdf(boost::math::normal_distribution<double, Policy>(), z); }

double student_t_cdf(double t, double dof) {
  return boost::math::cdf(boost::math::students_t_distribution<double, Policy>(dof), t);
}

double student_t_quantile(double p, double dof) {
  if (!(dof > 0) || std::isinf(dof)) return normal_quantile(p);
  if (!(p > 0 && p < 1)) throw std::invalid_argument("t quantile outside (0, 1)");
  return boost::math::quantile(boost::math::students_t_distribution<double, Policy>(dof), p);
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
      throw ProfileError(fmt::format("{}.covariance: must be a {}x{} matrix", path, p, p));
    }
    for (Eigen::Index i = 0; i < p; ++i) {
      if (!values.contains(b.names[i])) throw ProfileError(path + ".values." + b.names[i] + ": missing");
      b.value(i) = values.at(b.names[i]).get<double>();
      if (!cov[i].is_array() || cov[i].size() != b.names.size()) {
        throw ProfileError(fmt::format("{}.covariance[{}]: wrong length", path, i));
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
