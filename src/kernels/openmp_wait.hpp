// Keeps OpenMP's idle threads from spinning long when another process shares
// the cores.
//
// LibTorch runs an operator's parallel loop on an OpenMP team. GNU OpenMP
// lets a thread that finished its share spin (300,000 turns by default)
// before it sleeps. With one other busy process on a 2-core machine (a build,
// another job, a loaded CI runner) the spinning thread holds a core the
// thread still working needs, and each parallel region waits for the
// scheduler's time slice: under one `yes > /dev/null`, LeNet-5's step at
// batch 16 took 232 ms instead of 3 ms, and a profile's step times jumped
// between 14 and 332 ms and fell as the batch grew. A spin of 1,000 turns
// keeps the quiet machine's speed (no slower on LeNet-5, small_cnn and
// ResNet-20) and the loaded machine's sleeping threads out of the way
// (docs/benchmarks/openmp.md, "OpenMP's idle threads").
//
// GNU OpenMP reads GOMP_SPINCOUNT once, when the library loads, before main
// runs; so it is set in the environment and the program executed again, in
// the same process (same pid), once.
#pragma once
#include <string>

namespace tula::kernels {

inline constexpr const char* kOpenMpSpinCount = "1000";

// Unless the environment already chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT
// set: a user's choice is kept, and the second run finds it set), sets
// GOMP_SPINCOUNT to kOpenMpSpinCount and re-executes this program with the
// same arguments. Returns only when nothing was done or the exec failed
// (then the program goes on with the library's default).
void limit_openmp_spinning(char** argv);

// What this process runs with, for the records of measurements:
// "GOMP_SPINCOUNT=1000", "OMP_WAIT_POLICY=passive", or "library default".
std::string openmp_wait_setting();

}  // namespace tula::kernels
