#include "profile/device.hpp"

#include <stdexcept>

#include <torch/cuda.h>
#ifdef TULA_HAVE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

#include "profile/hardware.hpp"

namespace tula::profile {

torch::Device profile_device(const std::string& name) {
  if (name == "cpu") return torch::Device(torch::kCPU);
  if (name != "cuda" && name != "auto") {
    throw std::invalid_argument("--device: '" + name + "' is not a device (cpu, cuda or auto)");
  }
#ifdef TULA_HAVE_CUDA
  if (torch::cuda::is_available()) return torch::Device(torch::kCUDA, 0);
  if (name == "auto") return torch::Device(torch::kCPU);
  throw std::invalid_argument("--device cuda: no CUDA device is visible to this process (CUDA_VISIBLE_DEVICES, the driver)");
#else
  if (name == "auto") return torch::Device(torch::kCPU);
  throw std::invalid_argument("--device cuda: this tula was built against a LibTorch without CUDA; rebuild with "
                              "CMAKE_PREFIX_PATH pointing at a CUDA LibTorch (docs/gpu.md)");
#endif
}

predict::HardwareInfo describe_hardware(const torch::Device& device) {
  predict::HardwareInfo h = describe_cpu_hardware();
  if (!device.is_cuda()) return h;
#ifdef TULA_HAVE_CUDA
  const c10::cuda::CUDAGuard guard(device.index());
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device.index()) != cudaSuccess) {
    throw std::runtime_error("cannot read the properties of CUDA device " + std::to_string(device.index()));
  }
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) throw std::runtime_error("cudaMemGetInfo failed");
  h.device.kind = "cuda";
  h.device.name = properties.name;
  h.device.memory_bytes = static_cast<int64_t>(total);
  h.device.count = static_cast<int64_t>(torch::cuda::device_count());
#endif
  return h;
}

int64_t step_memory_budget(const torch::Device& device, const predict::HardwareInfo& hardware) {
  if (!device.is_cuda()) return hardware.device.memory_bytes / 2;
#ifdef TULA_HAVE_CUDA
  const c10::cuda::CUDAGuard guard(device.index());
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) throw std::runtime_error("cudaMemGetInfo failed");
  return static_cast<int64_t>(free);
#else
  return hardware.device.memory_bytes;
#endif
}

void release_cached_memory(const torch::Device& device) {
#ifdef TULA_HAVE_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#else
  (void)device;
#endif
}

}  // namespace tula::profile
