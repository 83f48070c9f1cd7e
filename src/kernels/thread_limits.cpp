#include "kernels/thread_limits.hpp"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

namespace tula::kernels {

void run_ops_on_this_thread_only() { omp_set_num_threads(1); }

bool yield_cores_to_training() {
#ifdef SCHED_IDLE
  sched_param param{};
  param.sched_priority = 0;
  return pthread_setschedparam(pthread_self(), SCHED_IDLE, &param) == 0;
#else
  return false;
#endif
}

}  // namespace tula::kernels
