// One pass over a parameter tensor for every momentum-SGD family update
// (SGD, LARS, AGS): d = grad_scale * g + weight_decay * w;
// buf = momentum * buf + (1 - dampening) * d (buf = d on the first step);
// w -= lr * buf (nesterov: w -= lr * (d + momentum * buf)).
//
// Why a kernel of our own: written with tensor ops this is four to five
// passes over memory and a temporary the size of the gradient per tensor
// (what torch.optim.SGD does on CPU); fused, it reads w, g, buf once and
// writes w, buf once, which halves the optimizer's share of a small-batch
// step. Tensors that are not dense float32 on the CPU laid out like their
// parameter take the tensor-op path with the same arithmetic.
#pragma once
#include <torch/types.h>

namespace tula::kernels {

struct MomentumUpdate {
  double lr = 0.0;
  double momentum = 0.0;
  double dampening = 0.0;
  double weight_decay = 0.0;
  double grad_scale = 1.0;
  bool nesterov = false;
};

// `buf` is the momentum buffer: undefined before the first step, in which
// case it is allocated and set to d. Unused when momentum == 0.
void momentum_update(torch::Tensor& param, const torch::Tensor& grad, torch::Tensor& buf,
                     const MomentumUpdate& u);

}  // namespace tula::kernels
