// How many CPU cores this process may run on: its affinity mask (taskset, a
// Slurm allocation, a cgroup cpuset), not the machine's count. No LibTorch.
#pragma once

namespace tula::common {

// At least 1.
int usable_cores();

}  // namespace tula::common
