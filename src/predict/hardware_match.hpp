// Whether a profile was measured on hardware like this machine's: the CPU
// model, the cores this process may use, the device, and the BLAS library the
// CPU kernels call. No LibTorch, so the tune runner (which links none) and the
// profile cache can ask too. The CPU side is read here; for a CUDA device the
// engine fills `device` itself.
#pragma once
#include <cstdint>
#include <string>

#include "predict/profile.hpp"

namespace tula::predict {

// The CPU's model name from /proc/cpuinfo ("unknown" when absent).
std::string cpu_model_name(const std::string& cpuinfo_path = "/proc/cpuinfo");

// Cores this process may run on (its CPU affinity, not the machine's total):
// what a worker pool on this machine actually gets. `tula profile` records
// this count, so a profile and this_machine_cpu() always agree on one machine.
int64_t usable_cores();

// This machine as a CPU device: cpu_model, cores (usable_cores()), device
// kind "cpu" named after the CPU model, the host name and common::math_library().
// device.memory_bytes is left 0: memory does not decide whether two machines
// match.
HardwareInfo this_machine_cpu();

// True when `profiled` and `here` have the same CPU model, core count, device
// kind, device name and math library (host names and memory are not
// compared: identical nodes of a cluster share profiles). The libraries are
// compared as text: a profile written before they were recorded names none,
// and matches only a process that loads none. Otherwise false, and *why
// (when given) says how they differ: "profiled on 'X' with 8 cores; this
// machine is 'Y' with 2 cores", or "profiled with the math library 'A'; this
// process calls 'B'".
bool same_hardware(const HardwareInfo& profiled, const HardwareInfo& here, std::string* why = nullptr);

// What same_hardware compares, as one line of text (the profile cache hashes
// it into its file names).
std::string hardware_fingerprint(const HardwareInfo& h);

}  // namespace tula::predict
