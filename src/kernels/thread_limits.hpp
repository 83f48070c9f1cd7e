// Helper threads (the data loader's producer) run LibTorch ops too; by default
// each such thread would start an OpenMP team as wide as the machine, whose
// spinning threads compete with the training step's own team. One call at the
// top of a helper thread keeps its ops on that thread alone.
#pragma once

namespace tula::kernels {

// Sets the calling thread's OpenMP team size to 1 (a per-thread setting: the
// training thread's intra-op threads are unaffected).
void run_ops_on_this_thread_only();

}  // namespace tula::kernels
