#include "train/precision.hpp"

#include <stdexcept>

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/version.h>

// LibTorch 2.4 names autocast's switches by device type; the per-device
// functions of 1.13 are deprecated there.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define TULA_AUTOCAST_BY_DEVICE_TYPE 1
#endif

namespace tula::train {
namespace {

at::ScalarType lower_type(const std::string& precision) {
  if (precision == "bf16") return at::kBFloat16;
  if (precision == "fp16") return at::kHalf;
  throw std::invalid_argument("unknown precision '" + precision + "' (fp32, bf16, fp16)");
}

bool enabled(torch::DeviceType type) {
#ifdef TULA_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::is_autocast_enabled(type);
#else
  return type == torch::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

at::ScalarType dtype(torch::DeviceType type) {
#ifdef TULA_AUTOCAST_BY_DEVICE_TYPE
  return at::autocast::get_autocast_dtype(type);
#else
  return type == torch::kCPU ? at::autocast::get_autocast_cpu_dtype() : at::autocast::get_autocast_gpu_dtype();
#endif
}

void set(torch::DeviceType type, bool on, at::ScalarType dtype) {
#ifdef TULA_AUTOCAST_BY_DEVICE_TYPE
  at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, on);
#else
  if (type == torch::kCPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(on);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(on);
  }
#endif
}

}  // namespace

AutocastScope::AutocastScope(const std::string& precision, const torch::Device& device)
    : device_type_(device.type()) {
  if (precision == "fp32") return;
  const auto type = lower_type(precision);
  if (device_type_ != torch::kCPU && device_type_ != torch::kCUDA) {
    throw std::invalid_argument("--precision " + precision + ": autocast needs a CPU or CUDA device");
  }
  if (device_type_ == torch::kCPU && type != at::kBFloat16) {
    throw std::invalid_argument("--precision " + precision + " runs on CUDA only; use bf16 on the CPU");
  }
  was_enabled_ = enabled(device_type_);
  previous_dtype_ = dtype(device_type_);
  set(device_type_, true, type);
  at::autocast::increment_nesting();
  active_ = true;
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cast weights are cached while autocast is on; the last scope out
  // drops them (the weights change at the update).
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  set(device_type_, was_enabled_, previous_dtype_);
}

LossScaler::LossScaler(const torch::Device& device, double initial) {
  const auto f = torch::TensorOptions(torch::kFloat).device(device);
  scale_ = torch::full({1}, initial, f);
  growth_tracker_ = torch::zeros({1}, torch::TensorOptions(torch::kInt).device(device));
  found_inf_ = torch::zeros({1}, f);
}

void LossScaler::unscale(const std::vector<torch::Tensor>& grads) {
  found_inf_.zero_();
  if (grads.empty()) return;
  auto inv_scale = scale_.reciprocal();
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale);
}

void LossScaler::update() {
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, /*scale_growth_factor=*/2.0,
                         /*scale_backoff_factor=*/0.5, /*growth_interval=*/2000);
}

double LossScaler::value() const { return scale_.item<double>(); }

}  // namespace tula::train
