#include "kernels/foreach_update.hpp"

#include <algorithm>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/version.h>

// `_fused_sgd_` (one CUDA kernel for the whole SGD step) exists from 2.3.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
#define TULA_HAVE_FUSED_SGD 1
#endif

namespace tula::kernels {

std::vector<torch::Tensor> decayed_gradients(const std::vector<torch::Tensor>& grads,
                                             const std::vector<torch::Tensor>& params, double weight_decay) {
  c10::NoGradGuard no_grad;
  if (grads.empty()) return {};
  if (weight_decay == 0) return at::_foreach_mul(grads, 1.0);  // a copy, so callers may scale it in place
  return at::_foreach_add(grads, params, weight_decay);
}

namespace {

// LibTorch 1.13's list operators want tensors of equal shapes pairwise: each
// factor is expanded (a view, no copy) to its tensor's shape.
std::vector<torch::Tensor> expanded_factors(const std::vector<torch::Tensor>& tensors, const torch::Tensor& factors) {
  auto f = factors.to(tensors.front().scalar_type());
  std::vector<torch::Tensor> expanded;
  expanded.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) expanded.push_back(f[static_cast<int64_t>(i)].expand_as(tensors[i]));
  return expanded;
}

}  // namespace

void scale_each(std::vector<torch::Tensor>& tensors, const torch::Tensor& factors) {
  c10::NoGradGuard no_grad;
  if (tensors.empty()) return;
  at::_foreach_mul_(tensors, expanded_factors(tensors, factors));
}

std::vector<torch::Tensor> scaled_each(const std::vector<torch::Tensor>& tensors, const torch::Tensor& factors) {
  c10::NoGradGuard no_grad;
  if (tensors.empty()) return {};
  return at::_foreach_mul(tensors, expanded_factors(tensors, factors));
}

void foreach_momentum_update(std::vector<torch::Tensor>& params, std::vector<torch::Tensor>& directions,
                             std::vector<torch::Tensor>& bufs, const ForeachMomentum& u) {
  c10::NoGradGuard no_grad;
  if (params.empty()) return;
  if (u.momentum == 0) {
    at::_foreach_add_(params, directions, -u.lr);
    return;
  }
  const bool first = std::none_of(bufs.begin(), bufs.end(), [](const torch::Tensor& b) { return b.defined(); });
  if (first) {
    for (size_t i = 0; i < bufs.size(); ++i) bufs[i] = directions[i].clone(torch::MemoryFormat::Preserve);
  } else {
    // A tensor with its first gradient among others that had theirs: a zero
    // buffer takes d as the first step's would (no dampening on first steps
    // is then lost only where dampening != 0).
    for (size_t i = 0; i < bufs.size(); ++i) {
      if (!bufs[i].defined()) bufs[i] = torch::zeros_like(directions[i], torch::MemoryFormat::Preserve);
    }
    at::_foreach_mul_(bufs, u.momentum);
    at::_foreach_add_(bufs, directions, 1 - u.dampening);
  }
  if (u.nesterov) {
    at::_foreach_add_(directions, bufs, u.momentum);
    at::_foreach_add_(params, directions, -u.lr);
  } else {
    at::_foreach_add_(params, bufs, -u.lr);
  }
}

bool foreach_sgd_update(std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
                        std::vector<torch::Tensor>& bufs, double weight_decay, const ForeachMomentum& u) {
  c10::NoGradGuard no_grad;
  if (params.empty()) return false;
#ifdef TULA_HAVE_FUSED_SGD
  if (params.front().is_cuda()) {
    const bool first =
        u.momentum != 0 && std::none_of(bufs.begin(), bufs.end(), [](const torch::Tensor& b) { return b.defined(); });
    for (size_t i = 0; u.momentum != 0 && i < bufs.size(); ++i) {
      if (!bufs[i].defined()) bufs[i] = torch::zeros_like(params[i]);
    }
    at::_fused_sgd_(params, grads, u.momentum != 0 ? at::TensorList(bufs) : at::TensorList(), weight_decay,
                    u.momentum, u.lr, u.dampening, u.nesterov, /*maximize=*/false, /*is_first_step=*/first);
    return true;
  }
#endif
  // Plain momentum only reads d, so without decay it is the gradient itself.
  auto d = weight_decay == 0 && !u.nesterov ? grads : decayed_gradients(grads, params, weight_decay);
  foreach_momentum_update(params, d, bufs, u);
  return false;
}

torch::Tensor foreach_squared_norms(const std::vector<torch::Tensor>& tensors) {
  c10::NoGradGuard no_grad;
  if (tensors.empty()) return torch::zeros({0});
  auto norms = torch::stack(at::_foreach_norm(tensors)).to(torch::kFloat);
  return norms.mul_(norms);
}

}  // namespace tula::kernels
