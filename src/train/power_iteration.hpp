// Power iteration for the largest-magnitude eigenvalue of a symmetric linear
// map given only as a product (here the Hessian, through Hessian-vector
// products), over vectors stored as lists of tensors (one per parameter).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <torch/types.h>

namespace tula::train {

using TensorList = std::vector<torch::Tensor>;

struct PowerIterationResult {
  double eigenvalue = 0.0;  // the Rayleigh quotient at the last vector
  int64_t iterations = 0;
  bool converged = false;
};

// Starts from `start` (any non-zero vector); stops when the estimate moves by
// less than `tolerance` relatively, or after `max_iterations` products.
PowerIterationResult power_iteration(const std::function<TensorList(const TensorList&)>& apply, TensorList start,
                                     int64_t max_iterations, double tolerance);

}  // namespace tula::train
