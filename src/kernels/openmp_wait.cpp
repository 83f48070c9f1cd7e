#include "kernels/openmp_wait.hpp"

#include <unistd.h>

#include <cstdlib>

namespace tula::kernels {

void limit_openmp_spinning(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only reached when the exec failed (no /proc): the environment now holds
  // the setting, which the library loaded already will not read; children will.
}

std::string openmp_wait_setting() {
  std::string out;
  for (const char* name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"}) {
    if (const char* value = std::getenv(name)) out += (out.empty() ? "" : " ") + std::string(name) + "=" + value;
  }
  return out.empty() ? "library default" : out;
}

}  // namespace tula::kernels
