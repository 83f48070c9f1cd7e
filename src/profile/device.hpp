// The device a profile measures (`tula profile --device cpu|cuda|auto`) and
// what the profile records of it: the CPU as before; on CUDA the GPU's name,
// its memory (cudaMemGetInfo's total) and how many this process sees.
// CUDA-only code is compiled where LibTorch has CUDA (TULA_HAVE_CUDA).
#pragma once
#include <cstdint>
#include <string>

#include <torch/types.h>

#include "predict/profile.hpp"

namespace tula::profile {

// "cpu", "cuda" (the process's first visible GPU) or "auto" (CUDA where a GPU
// is visible, else the CPU). Throws std::invalid_argument naming what is
// missing: another name, no GPU visible, or a tula built without CUDA.
torch::Device profile_device(const std::string& name);

// The hardware section: the CPU's (describe_cpu_hardware), and for a CUDA
// device the GPU's kind "cuda", name, total memory and visible count.
predict::HardwareInfo describe_hardware(const torch::Device& device);

// What one worker's step may take: half the host's memory on the CPU (as
// before devices were profiled), the memory free on the GPU now.
int64_t step_memory_budget(const torch::Device& device, const predict::HardwareInfo& hardware);

// After an out-of-memory error: frees what the CUDA caching allocator holds
// unused, so the next trial starts from the device's free memory. Nothing on the CPU.
void release_cached_memory(const torch::Device& device);

}  // namespace tula::profile
