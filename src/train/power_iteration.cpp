#include "train/power_iteration.hpp"

#include <cmath>
#include <stdexcept>

#include <torch/torch.h>

namespace tula::train {
namespace {

double dot(const TensorList& a, const TensorList& b) {
  double s = 0.0;
  for (size_t i = 0; i < a.size(); ++i) s += (a[i].to(torch::kDouble) * b[i].to(torch::kDouble)).sum().item<double>();
  return s;
}

void scale(TensorList& v, double k) {
  for (auto& t : v) t.mul_(k);
}

}  // namespace

PowerIterationResult power_iteration(const std::function<TensorList(const TensorList&)>& apply, TensorList v,
                                     int64_t max_iterations, double tolerance) {
  const double start_norm = std::sqrt(dot(v, v));
  if (!(start_norm > 0)) throw std::invalid_argument("power iteration: the start vector is zero");
  scale(v, 1.0 / start_norm);
  PowerIterationResult r;
  for (int64_t it = 0; it < max_iterations; ++it) {
    TensorList av = apply(v);
    const double estimate = dot(v, av);  // Rayleigh quotient, |v| = 1
    const double norm = std::sqrt(dot(av, av));
    r.iterations = it + 1;
    if (norm == 0) {  // v is in the null space: every eigenvalue it sees is 0
      r.eigenvalue = 0;
      r.converged = true;
      return r;
    }
    const bool settled = it > 0 && std::abs(estimate - r.eigenvalue) <= tolerance * std::abs(estimate);
    r.eigenvalue = estimate;
    if (settled) {
      r.converged = true;
      return r;
    }
    v = std::move(av);
    scale(v, 1.0 / norm);
  }
  return r;
}

}  // namespace tula::train
