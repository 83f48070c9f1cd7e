// Small statistics kit for the fits: weighted least squares with parameter
// covariances, Student-t and normal quantiles, robust summaries, and draws of
// parameter vectors for propagating fit uncertainty into predictions.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

namespace tula::predict {

// The fitted parameters of one linear(-ized) model with their joint
// uncertainty: cov = s^2 (X^T W X)^-1 with s^2 the weighted residual variance
// on `dof` degrees of freedom. dof == 0 means an exact fit whose uncertainty is
// unknown (cov is then zero and intervals collapse; fits require dof >= 1).
struct ParamBlock {
  std::vector<std::string> names;
  Eigen::VectorXd value;
  Eigen::MatrixXd cov;
  int dof = 0;
  int points = 0;           // observations the fit used
  double residual_sd = 0;   // in the (weighted) units the fit minimized

  int size() const { return static_cast<int>(value.size()); }
  int index(const std::string& name) const;  // throws std::out_of_range
  double operator[](const std::string& name) const { return value(index(name)); }
  double se(int i) const;
  double se(const std::string& name) const { return se(index(name)); }
  // Two-sided confidence interval of one parameter at `level` (Student t on dof).
  std::pair<double, double> interval(const std::string& name, double level = 0.95) const;
};

// Weighted least squares y ~ X beta, minimizing sum_i w_i (y_i - x_i beta)^2.
// Throws FitError naming `what` when X has fewer rows than columns or is rank
// deficient (e.g. every sample at the same batch size).
ParamBlock weighted_least_squares(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, const Eigen::VectorXd& w,
                                  std::vector<std::string> names, const std::string& what);

// Weights that make least squares minimize relative error: timings span
// orders of magnitude (4 KB to 100 MB messages) and their noise grows with
// their size, so absolute least squares would let the largest points decide.
Eigen::VectorXd relative_weights(const Eigen::VectorXd& y);

double median(std::vector<double> v);
double mean(const std::vector<double>& v);  // throws std::invalid_argument when empty
// Quantile of an already sorted vector, linear interpolation between order statistics.
double sorted_quantile(const std::vector<double>& sorted, double q);

// The quantiles throw std::invalid_argument unless 0 < p < 1.
double normal_quantile(double p);
double normal_cdf(double z);
// NaN when dof <= 0 or an argument is NaN; infinite dof gives the normal CDF.
double student_t_cdf(double t, double dof);
double student_t_quantile(double p, double dof);  // dof <= 0 or infinite: normal

// Draws parameter vectors from the multivariate Student t with the block's
// centre, scale matrix and dof: the posterior of a linear model's coefficients
// under a flat prior, so its quantiles match the t intervals of each
// parameter. Row k of the result is draw k. dof == 0 gives the centre only.
Eigen::MatrixXd draw_parameters(const ParamBlock& block, int draws, std::mt19937_64& rng);

nlohmann::json to_json(const ParamBlock& block);
// Throws ProfileError naming `path` when a field is missing or ill-shaped.
ParamBlock param_block_from_json(const nlohmann::json& j, const std::string& path);
// The "params" block of a fitted model's JSON at `path`, which must hold one
// parameter per name in `names` (e.g. {"alpha", "inv_bw"}); a ProfileError
// naming "<path>.params" otherwise.
ParamBlock model_params_from_json(const nlohmann::json& model, const std::string& path,
                                  const std::vector<std::string>& names);

}  // namespace tula::predict
