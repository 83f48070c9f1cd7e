#include "tune/backend.hpp"

namespace tula::tune {

std::unique_ptr<Backend> make_local_backend(const BackendOptions&) {
  throw BackendError("the local backend is not built yet");
}

}  // namespace tula::tune
