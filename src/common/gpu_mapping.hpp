// Which GPU each worker of a node trains on, and how many a node offers: the
// CUDA runtime's rules for CUDA_VISIBLE_DEVICES, kept apart from CUDA itself
// so that the mapping is the same (and testable) in a build without it.
#pragma once
#include <optional>
#include <string>

namespace tula::common {

// GPUs a process sees, out of `physical` on the machine, under
// CUDA_VISIBLE_DEVICES = `visible` (nullopt: unset, all of them). As the CUDA
// runtime reads it: a comma-separated list of indices or UUIDs ("GPU-...",
// "MIG-..."), taken up to the first entry that names no device (an index
// out of range, a negative one, anything else); an empty list hides them all.
int visible_gpu_count(const std::optional<std::string>& visible, int physical);

// The same for this process's environment.
int visible_gpu_count(int physical);

// The GPU (as numbered inside the process, 0..gpus-1) that the worker of
// `local_rank` uses: its own where there are as many GPUs as workers, the
// GPUs shared round robin where there are fewer. Throws std::invalid_argument
// when there is none (gpus < 1) or local_rank < 0.
int gpu_of_local_rank(int local_rank, int gpus);

}  // namespace tula::common
