#include "train/device_input.hpp"

#include <optional>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>
#include <torch/torch.h>

#include "data/transform.hpp"

#ifdef TULA_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAGuard.h>
#endif

namespace tula::train {

InputDtype resolve_input_dtype(const std::string& name, const torch::Device& device) {
  if (name == "float32") return InputDtype::kFloat32;
  if (name == "uint8") return InputDtype::kUint8;
  if (name == "auto") return device.is_cuda() ? InputDtype::kUint8 : InputDtype::kFloat32;
  throw std::invalid_argument(fmt::format("unknown --input-dtype '{}' (auto, float32, uint8)", name));
}

const char* input_dtype_name(InputDtype dtype) { return dtype == InputDtype::kUint8 ? "uint8" : "float32"; }

data::Batch to_device(const data::Batch& batch, const DeviceInputOptions& options) {
  const torch::NoGradGuard no_grad;
  data::Batch out;
  // non_blocking: from pinned memory the copy is queued, not waited for.
  out.labels = batch.labels.to(options.device, /*non_blocking=*/true);
  out.images = batch.images.to(options.device, /*non_blocking=*/true);
  if (out.images.scalar_type() != torch::kUInt8) return out;
  // The loader's float path, step for step: bytes / 255, resize, normalize.
  out.images = out.images.to(torch::kFloat32).div_(255.0);
  if (options.image_size > 0 &&
      (out.images.size(2) != options.image_size || out.images.size(3) != options.image_size)) {
    out.images = data::resize_images(out.images, options.image_size);
  }
  if (!options.mean.empty() || !options.std.empty()) data::normalize_images_(out.images, options.mean, options.std);
  return out;
}

struct DeviceInput::Pending {
  data::Batch batch;  // on the host (CPU), or on the device being filled (CUDA)
#ifdef TULA_HAVE_CUDA
  std::optional<at::cuda::CUDAEvent> ready;  // recorded on the side stream after the conversion
#endif
};

DeviceInput::DeviceInput(DeviceInputOptions options) : options_(std::move(options)) {}

DeviceInput::~DeviceInput() = default;

bool DeviceInput::staged() const { return pending_ != nullptr; }

void DeviceInput::stage(data::Batch batch) {
  if (pending_) throw std::logic_error("device input: a batch is staged already (take it first)");
  auto pending = std::make_unique<Pending>();
#ifdef TULA_HAVE_CUDA
  if (options_.device.is_cuda()) {
    const auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, options_.device.index());
    const c10::cuda::CUDAStreamGuard on_side(side);
    pending->batch = to_device(batch, options_);
    pending->ready.emplace();
    pending->ready->record(side);
    pending_ = std::move(pending);
    return;
  }
#endif
  pending->batch = std::move(batch);
  pending_ = std::move(pending);
}

data::Batch DeviceInput::take() {
  if (!pending_) throw std::logic_error("device input: no batch staged");
  auto pending = std::move(pending_);
#ifdef TULA_HAVE_CUDA
  if (pending->ready) {
    const auto current = at::cuda::getCurrentCUDAStream(options_.device.index());
    pending->ready->block(current);
    // Made on the side stream, used on this one: the caching allocator must
    // not hand their memory out again before this stream is done with them.
    pending->batch.images.record_stream(current);
    pending->batch.labels.record_stream(current);
    return std::move(pending->batch);
  }
#endif
  return to_device(pending->batch, options_);
}

}  // namespace tula::train
