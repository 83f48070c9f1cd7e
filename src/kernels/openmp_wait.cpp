#include "kernels/openmp_wait.hpp"

#include <unistd.h>

#include <cstdlib>

namespace tula::kernels {

void wait_passively_in_openmp(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only reached when the exec failed (no /proc): the environment now says
  // PASSIVE, which the library loaded already will not read; children will.
}

}  // namespace tula::kernels
