// The `tula` command: one binary, one subcommand per capability.
#include <cstdio>
#include <exception>
#include <iostream>

#include <c10/util/Exception.h>

#include "cli/commands.hpp"
#include "kernels/heap_tuning.hpp"

namespace tula::cli {
int& exit_status() {
  static int status = 0;
  return status;
}
std::vector<std::string>& raw_arguments() {
  static std::vector<std::string> args;
  return args;
}
}  // namespace tula::cli

int main(int argc, char** argv) {
  // Before the first tensor: every subcommand that trains or times steps
  // (train, profile and its workers) runs the same allocator settings.
  tula::kernels::keep_freed_memory_for_reuse();
  tula::cli::raw_arguments().assign(argv + 1, argv + argc);
  CLI::App app{"Tula: fast, cheap and accurate large-batch training of CNNs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tula 0.1.0");
  tula::cli::add_models_command(app);
  tula::cli::add_launch_command(app);
  tula::cli::add_train_command(app);
  tula::cli::add_profile_command(app);
  tula::cli::add_profile_worker_command(app);
  tula::cli::add_predict_command(app);
  tula::cli::add_plan_command(app);
  tula::cli::add_simulate_command(app);
  tula::cli::add_analyze_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const c10::Error& e) {
    // LibTorch's own errors carry a C++ backtrace that tells a user nothing.
    std::cerr << "tula: error: " << e.what_without_backtrace() << std::endl;
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tula: error: " << e.what() << std::endl;
    return 1;
  }
  return tula::cli::exit_status();
}
