// What machine a profile was measured on: the CPU model, usable cores and
// memory, read from Linux's /proc and cgroup files. No LibTorch here.
#pragma once
#include <cstdint>
#include <string>

#include "predict/profile.hpp"

namespace tula::profile {

// The CPU's model name from /proc/cpuinfo ("unknown" when absent); the same
// reading as predict::cpu_model_name (src/predict/hardware_match.hpp), which
// matches cached profiles to this machine.
std::string cpu_model_name(const std::string& cpuinfo_path = "/proc/cpuinfo");

// Cores this process may run on (its CPU affinity, not the machine's total):
// what a worker pool on this machine actually gets. predict::usable_cores().
int64_t usable_cores();

// Memory this process may use: MemTotal of /proc/meminfo, lowered to the
// cgroup (v2 memory.max or v1 limit_in_bytes) limit when one is set, since a
// container's limit is what a worker would hit first.
int64_t usable_memory_bytes();

// The profile's hardware section for a CPU device: predict::this_machine_cpu()
// (device.kind "cpu", device.name the CPU model) with device.memory_bytes =
// usable_memory_bytes().
predict::HardwareInfo describe_cpu_hardware();

}  // namespace tula::profile
