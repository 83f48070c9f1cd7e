// Mixed precision for the step: the forward pass and the loss under autocast
// to bf16 or fp16 (matrix products and convolutions in the lower type, what
// needs range in fp32, as PyTorch's torch.autocast), and for fp16 a dynamic
// loss scale kept on the device (PyTorch's GradScaler rule, built from
// LibTorch's `_amp_foreach_non_finite_check_and_unscale_` and
// `_amp_update_scale_`, which exist for CUDA only).
#pragma once
#include <string>
#include <vector>

#include <torch/types.h>

namespace tula::train {

// Autocast on for `precision` ("bf16", "fp16"; "fp32": nothing) on `device`
// while alive; restores the previous state.
class AutocastScope {
 public:
  AutocastScope(const std::string& precision, const torch::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool active_ = false;
  bool was_enabled_ = false;
  torch::DeviceType device_type_;
  at::ScalarType previous_dtype_ = at::kFloat;
};

// The fp16 loss scale: the loss is multiplied by it before backward, the
// gradients divided by it after; a step whose gradients overflowed is skipped
// and halves the scale, 2000 good steps in a row double it.
class LossScaler {
 public:
  explicit LossScaler(const torch::Device& device, double initial = 65536.0);
  const torch::Tensor& scale() const { return scale_; }
  // Unscales `grads` in place and records whether any was not finite.
  void unscale(const std::vector<torch::Tensor>& grads);
  // After the step: moves the scale by what unscale() found.
  void update();
  // Reads the scale (a host read: for messages only).
  double value() const;

 private:
  torch::Tensor scale_, growth_tracker_, found_inf_;
};

}  // namespace tula::train
