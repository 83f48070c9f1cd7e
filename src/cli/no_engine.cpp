// `tula` built with TULA_WITH_TORCH=OFF: the planning commands work from a
// profile measured elsewhere; the engine commands are listed but only say how
// to get a build that has them.
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"

namespace tula::cli {
namespace {

struct EngineCommand {
  const char* name;
  const char* description;
};

constexpr EngineCommand kEngineCommands[] = {
    {"models", "List the CNN zoo with parameter counts and weight sizes"},
    {"launch", "Start the workers of a data-parallel job on this node, like torchrun"},
    {"train", "Train a CNN data-parallel (one worker, or --nproc N on this node)"},
    {"profile", "Measure a model on this machine and fit the time and memory models"},
    {"analyze", "Gradient norms and the Hessian's largest eigenvalue along a run"},
    {"tune", "Profile, plan, train at the chosen configuration, re-plan, report the bill"},
};

std::string no_engine_message(const std::string& command) {
  return "`tula " + command + "`: this build has no training engine (built with TULA_WITH_TORCH=OFF).\n"
         "To get one, install LibTorch (scripts/setup installs libtorch-dev) and configure with\n"
         "-DTULA_WITH_TORCH=ON, the default (scripts/build). This build runs predict, plan and simulate.";
}

// Takes any arguments (the first it does not know ends parsing), so the
// message is the same however the command was called; --help still works.
void add_stand_in(CLI::App& app, const EngineCommand& command) {
  auto* sub = app.add_subcommand(command.name, std::string(command.description) + " (not in this build)");
  sub->prefix_command();
  sub->footer("\n" + no_engine_message(command.name));
  const std::string name = command.name;
  sub->callback([name] { throw std::runtime_error(no_engine_message(name)); });
}

}  // namespace

void add_engine_commands(CLI::App& app) {
  for (const auto& command : kEngineCommands) add_stand_in(app, command);
}

void prepare_engine(char** /*argv*/) {}

std::string error_message(const std::exception& error) { return error.what(); }

}  // namespace tula::cli
