// Helper threads (the data loader's producer) run LibTorch ops too; by default
// each such thread would start an OpenMP team as wide as the machine, whose
// spinning threads compete with the training step's own team. One call at the
// top of a helper thread keeps its ops on that thread alone.
#pragma once

namespace tula::kernels {

// Sets the calling thread's OpenMP team size to 1 (a per-thread setting: the
// training thread's intra-op threads are unaffected).
void run_ops_on_this_thread_only();

// Lowers the calling thread to the idle scheduling class (Linux SCHED_IDLE):
// it runs only on cores nothing else wants. A prefetching thread on a machine
// whose cores all run the step's intra-op team would otherwise preempt one of
// that team's threads mid-kernel, and the whole team waits at the kernel's
// barrier; idle-class, it fills the gaps (and when training waits for its
// batch, the waiting thread sleeps and frees a core for it). Returns false
// where the platform has no such class (the thread keeps its priority).
bool yield_cores_to_training();

}  // namespace tula::kernels
