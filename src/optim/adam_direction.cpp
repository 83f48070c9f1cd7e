#include "optim/adam_direction.hpp"

#include <cmath>

#include <torch/torch.h>

namespace tula::optim {

torch::Tensor adam_direction(const torch::Tensor& g, torch::Tensor& m, torch::Tensor& v, double beta1,
                             const AdamMoments& moments, int64_t step) {
  if (!m.defined()) {
    m = torch::zeros_like(g);
    v = torch::zeros_like(g);
  }
  const double t = static_cast<double>(step);
  m.mul_(beta1).add_(g, 1 - beta1);
  v.mul_(moments.beta2).addcmul_(g, g, 1 - moments.beta2);
  return (m / (1 - std::pow(beta1, t))).div_((v / (1 - std::pow(moments.beta2, t))).sqrt_().add_(moments.eps));
}

}  // namespace tula::optim
