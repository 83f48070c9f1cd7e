#include "kernels/momentum_update.hpp"

#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

namespace tula::kernels {
namespace {

// One pass over raw memory needs dense float32 CPU tensors laid out alike
// (contiguous, or channels-last weights with channels-last gradients).
bool fusable(const torch::Tensor& t, const torch::Tensor& like) {
  return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_non_overlapping_and_dense() &&
         t.strides() == like.strides();
}

// The same arithmetic with tensor ops, for CUDA and other dtypes.
void update_with_tensor_ops(torch::Tensor& p, const torch::Tensor& g, torch::Tensor& buf,
                            const MomentumUpdate& u) {
  auto d = u.grad_scale == 1.0 ? g : g.mul(u.grad_scale);
  if (u.weight_decay != 0) d = d.add(p, u.weight_decay);
  if (u.momentum != 0) {
    if (!buf.defined()) {
      buf = d.clone();
    } else {
      buf.mul_(u.momentum).add_(d, 1 - u.dampening);
    }
    d = u.nesterov ? d.add(buf, u.momentum) : buf;
  }
  p.add_(d, -u.lr);
}

// Branch-free loops over restrict pointers, vectorized (-O2 alone leaves them
// scalar, which made the fused step slower than the tensor ops).
__attribute__((optimize("tree-vectorize"))) void plain_step(float* __restrict w, const float* __restrict g, int64_t n, float lr, float wd, float scale) {
  for (int64_t j = 0; j < n; ++j) w[j] -= lr * (scale * g[j] + wd * w[j]);
}

__attribute__((optimize("tree-vectorize"))) void momentum_step(float* __restrict w, const float* __restrict g, float* __restrict b, int64_t n, float lr,
                   float decay, float keep, float wd, float scale, float along_d, float along_buf) {
  for (int64_t j = 0; j < n; ++j) {
    const float d = scale * g[j] + wd * w[j];
    const float v = decay * b[j] + keep * d;
    b[j] = v;
    w[j] -= lr * (along_d * d + along_buf * v);
  }
}

}  // namespace

void momentum_update(torch::Tensor& param, const torch::Tensor& grad, torch::Tensor& buf,
                     const MomentumUpdate& u) {
  c10::NoGradGuard no_grad;
  const bool first = u.momentum != 0 && !buf.defined();
  if (first) buf = torch::zeros_like(param, torch::MemoryFormat::Preserve);
  if (!fusable(param, param) || !fusable(grad, param) || (u.momentum != 0 && !fusable(buf, param))) {
    if (first) buf = torch::Tensor();
    update_with_tensor_ops(param, grad, buf, u);
    return;
  }
  float* const w = param.data_ptr<float>();
  const float* const g = grad.data_ptr<float>();
  float* const b = u.momentum != 0 ? buf.data_ptr<float>() : nullptr;
  const auto lr = static_cast<float>(u.lr), m = static_cast<float>(u.momentum);
  const auto keep = first ? 1.0F : static_cast<float>(1 - u.dampening);
  const auto decay = first ? 0.0F : m;  // the first step's buffer is d itself
  const auto wd = static_cast<float>(u.weight_decay), scale = static_cast<float>(u.grad_scale);
  // Nesterov steps along d + m * buf; plain momentum along buf.
  const float along_d = u.nesterov ? 1.0F : 0.0F, along_buf = u.nesterov ? m : 1.0F;
  // 64K floats per task: large enough that waking a second thread pays.
  at::parallel_for(0, param.numel(), 1 << 16, [=](int64_t begin, int64_t end) {
    if (b == nullptr) {
      plain_step(w + begin, g + begin, end - begin, lr, wd, scale);
    } else {
      momentum_step(w + begin, g + begin, b + begin, end - begin, lr, decay, keep, wd, scale, along_d, along_buf);
    }
  });
}

}  // namespace tula::kernels
