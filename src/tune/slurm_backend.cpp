#include "tune/backend.hpp"

namespace tula::tune {

std::unique_ptr<Backend> make_slurm_backend(const BackendOptions&) {
  throw BackendError("the Slurm backend is not built yet");
}

}  // namespace tula::tune
