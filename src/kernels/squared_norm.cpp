#include "kernels/squared_norm.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <c10/core/GradMode.h>

namespace tula::kernels {
namespace {

constexpr int64_t kChunk = 1 << 14;  // floats summed in float before going to double

double sum_of_squares(const float* x, int64_t n) {
  double total = 0.0;
  for (int64_t start = 0; start < n; start += kChunk) {
    const int64_t stop = std::min(n, start + kChunk);
    float partial = 0.0F;
#pragma omp simd reduction(+ : partial)
    for (int64_t j = start; j < stop; ++j) partial += x[j] * x[j];
    total += partial;
  }
  return total;
}

}  // namespace

double squared_norm(const torch::Tensor& t) {
  c10::NoGradGuard no_grad;
  if (!(t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous())) {
    auto d = t.to(torch::kDouble).reshape({-1});
    return d.dot(d).item<double>();
  }
  const float* x = t.data_ptr<float>();
  return at::parallel_reduce(
      int64_t{0}, t.numel(), int64_t{1} << 16, 0.0,
      [x](int64_t begin, int64_t end, double acc) { return acc + sum_of_squares(x + begin, end - begin); },
      [](double a, double b) { return a + b; });
}

torch::Tensor squared_norms(const std::vector<torch::Tensor>& tensors) {
  c10::NoGradGuard no_grad;
  if (tensors.empty()) return torch::zeros({0});
  if (!tensors.front().device().is_cpu()) {
    auto norms = torch::stack(at::_foreach_norm(tensors)).to(torch::kFloat);  // a few launches for all tensors
    return norms.mul_(norms);
  }
  auto out = torch::empty({static_cast<int64_t>(tensors.size())}, torch::kFloat);
  auto* o = out.data_ptr<float>();
  for (size_t i = 0; i < tensors.size(); ++i) o[i] = static_cast<float>(squared_norm(tensors[i]));
  return out;
}

}  // namespace tula::kernels
