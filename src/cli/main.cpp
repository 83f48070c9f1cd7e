// The `tula` command: one binary, one subcommand per capability.
#include <exception>
#include <iostream>

#include "cli/commands.hpp"

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
  tula::cli::prepare_engine(argv);
  tula::cli::raw_arguments().assign(argv + 1, argv + argc);
  CLI::App app{"Tula: fast, cheap and accurate large-batch training of CNNs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tula 0.1.0");
  tula::cli::add_engine_commands(app);
  tula::cli::add_predict_command(app);
  tula::cli::add_plan_command(app);
  tula::cli::add_simulate_command(app);
  tula::cli::add_serve_command(app);
  tula::cli::add_jobs_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "tula: error: " << tula::cli::error_message(e) << std::endl;
    return 1;
  }
  return tula::cli::exit_status();
}
