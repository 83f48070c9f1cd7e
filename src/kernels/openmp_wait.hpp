// Makes OpenMP's idle threads sleep instead of spin when another process
// shares the cores.
//
// LibTorch runs an operator's parallel loop on an OpenMP team. GNU OpenMP's
// default lets a thread that finished its share spin for a while before it
// sleeps. With one other busy process on a 2-core machine (a build, another
// job, a loaded CI runner) the spinning thread and the one still working
// take turns on a core, and the step waits for the scheduler's time slice:
// under one `yes > /dev/null`, small_cnn's forward+backward at batch 2 took
// 14-332 ms from one repeat to the next and fell as the batch grew, where a
// passive wait gave 4.2-4.5 ms and a time that grows with the batch
// (docs/benchmarks.md, "OpenMP's wait"). A profile measured so is wrong, and
// so is every plan made from it.
//
// GNU OpenMP reads OMP_WAIT_POLICY once, when the library loads, before main
// runs; so the policy is set in the environment and the program executed
// again, in the same process (same pid), once.
#pragma once

namespace tula::kernels {

// Unless OMP_WAIT_POLICY is already set (a user's choice is kept, and the
// second run finds it set), sets it to PASSIVE and re-executes this program
// with the same arguments. Returns only when nothing was done or the exec
// failed (then the program goes on with the library's default).
void wait_passively_in_openmp(char** argv);

}  // namespace tula::kernels
