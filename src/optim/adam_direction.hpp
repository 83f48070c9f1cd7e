// Adam's per-coordinate normalized step, shared by LAMB and AGS's "adam"
// direction: updates the moments with gradient g and returns
//   m_hat / (sqrt(v_hat) + eps),
// the moments bias-corrected for `step` (1 on the first call). `m` and `v`
// are allocated (zeros) on the first call.
#pragma once
#include <cstdint>

#include <torch/types.h>

#include "optim/optimizer_options.hpp"

namespace tula::optim {

torch::Tensor adam_direction(const torch::Tensor& g, torch::Tensor& m, torch::Tensor& v, double beta1,
                             const AdamMoments& moments, int64_t step);

}  // namespace tula::optim
