// `tula tune`: one command from a model and a data set to a trained model at
// the configuration the objective picks (src/tune/runner.hpp).
#include "cli/commands.hpp"

namespace tula::cli {

void add_tune_command(CLI::App& app) {
  app.add_subcommand("tune", "Profile, plan, train at the chosen configuration, re-plan, report the bill");
}

}  // namespace tula::cli
