#include "kernels/thread_limits.hpp"

#include <omp.h>

namespace tula::kernels {

void run_ops_on_this_thread_only() { omp_set_num_threads(1); }

}  // namespace tula::kernels
