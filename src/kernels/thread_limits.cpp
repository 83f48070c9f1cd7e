#include "kernels/thread_limits.hpp"

#include <ATen/Parallel.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>

namespace tula::kernels {

void run_ops_on_this_thread_only() {
  // LibTorch sets a thread's OpenMP team size to the process's intra-op
  // count the first time the thread runs a parallel op (a thread-local lazy
  // init); run here first, so that our setting comes after it and stays.
  at::internal::lazy_init_num_threads();
  omp_set_num_threads(1);
}

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
