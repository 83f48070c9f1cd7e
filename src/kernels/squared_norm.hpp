// Squared L2 norms of many tensors, the statistic read every step by the
// gradient reducer (gradient noise inputs) and by layer-wise optimizers.
//
// Why a kernel of our own: torch::dot on a CPU float tensor goes to the BLAS,
// whose own thread pool fights LibTorch's OpenMP team on a small machine; on
// resnet18 the per-tensor dots took ~35 ms of a ~160 ms step. One OpenMP pass
// with a vectorized float reduction (accumulated in double per chunk) costs a
// read of the data.
#pragma once
#include <vector>

#include <torch/types.h>

namespace tula::kernels {

// Sum of squares of one tensor, accumulated in double.
double squared_norm(const torch::Tensor& t);

// One squared norm per tensor, as a float tensor of size tensors.size() on the
// tensors' device (CUDA tensors are reduced on the device, without a sync).
torch::Tensor squared_norms(const std::vector<torch::Tensor>& tensors);

}  // namespace tula::kernels
