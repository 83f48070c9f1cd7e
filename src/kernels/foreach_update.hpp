// The momentum-SGD family update (SGD, LARS, AGS) over every parameter tensor
// at once, with LibTorch's multi-tensor `_foreach_*` operators: a handful of
// operator calls per step whatever the number of tensors, where the
// per-tensor update (momentum_update.hpp) costs four to five calls per
// tensor. On a GPU each call is one or a few kernel launches over all
// tensors; on the CPU LibTorch 1.13 runs them tensor by tensor, and the
// one-pass kernel stays faster there (docs/gpu.md, "The GPU step: CPU-side
// checks").
//
// Per-tensor factors (AGS's scales, LARS's and LAMB's trust ratios) live in
// one tensor on the parameters' device and are applied there: nothing in an
// update reads a value back to the host.
#pragma once
#include <vector>

#include <torch/types.h>

namespace tula::kernels {

struct ForeachMomentum {
  double lr = 0.0;
  double momentum = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
};

// d = g + weight_decay * w over the lists (a new list; g is left alone).
std::vector<torch::Tensor> decayed_gradients(const std::vector<torch::Tensor>& grads,
                                             const std::vector<torch::Tensor>& params, double weight_decay);

// Multiplies tensors[i] in place by factors[i] (`factors`: one value per
// tensor, on their device).
void scale_each(std::vector<torch::Tensor>& tensors, const torch::Tensor& factors);

// factors[i] * tensors[i] for each i, as a new list.
std::vector<torch::Tensor> scaled_each(const std::vector<torch::Tensor>& tensors, const torch::Tensor& factors);

// buf = momentum * buf + (1 - dampening) * d (buf = d when `bufs` are
// undefined, the first step); w -= lr * buf (nesterov: w -= lr * (d +
// momentum * buf)). `directions` may be modified. Without momentum `bufs` is
// unused.
void foreach_momentum_update(std::vector<torch::Tensor>& params, std::vector<torch::Tensor>& directions,
                             std::vector<torch::Tensor>& bufs, const ForeachMomentum& u);

// SGD's whole update: one fused kernel where the LibTorch build has one for
// the tensors' device (`_fused_sgd_` on CUDA from LibTorch 2.3), else the
// foreach calls above. Returns whether the fused kernel ran.
bool foreach_sgd_update(std::vector<torch::Tensor>& params, const std::vector<torch::Tensor>& grads,
                        std::vector<torch::Tensor>& bufs, double weight_decay, const ForeachMomentum& u);

// One squared L2 norm per tensor in a float32 tensor on their device, by
// `_foreach_norm`: no host read.
torch::Tensor foreach_squared_norms(const std::vector<torch::Tensor>& tensors);

}  // namespace tula::kernels
