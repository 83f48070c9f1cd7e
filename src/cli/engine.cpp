// The training engine's side of `tula`, in the build with LibTorch.
#include <c10/util/Exception.h>

#include "cli/commands.hpp"
#include "kernels/heap_tuning.hpp"
#include "kernels/openmp_wait.hpp"

namespace tula::cli {

void add_engine_commands(CLI::App& app) {
  add_models_command(app);
  add_launch_command(app);
  add_train_command(app);
  add_profile_command(app);
  add_analyze_command(app);
  add_tune_command(app);
}

// Before the first tensor: every subcommand that trains or times steps
// (train, profile and its workers) runs the same OpenMP spinning and
// allocator settings.
void prepare_engine(char** argv) {
  kernels::limit_openmp_spinning(argv);
  kernels::keep_freed_memory_for_reuse();
}

std::string error_message(const std::exception& error) {
  // LibTorch's own errors carry a C++ backtrace that tells a user nothing.
  if (const auto* torch_error = dynamic_cast<const c10::Error*>(&error)) return torch_error->what_without_backtrace();
  return error.what();
}

}  // namespace tula::cli
