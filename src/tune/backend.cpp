#include "tune/backend.hpp"

namespace tula::tune {

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
  if (name == "local") return make_local_backend(options);
  if (name == "slurm") return make_slurm_backend(options);
  if (name == "emulated") return make_emulated_backend(options);
  throw std::invalid_argument("unknown backend '" + name + "' (local, slurm, emulated)");
}

}  // namespace tula::tune
