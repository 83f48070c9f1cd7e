// `tula tune`: one command from a model and a data set to a trained model at
// the configuration the objective picks (src/tune/runner.hpp).
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "cli/schema_options.hpp"
#include "tune/runner.hpp"

namespace tula::cli {
namespace {

struct TuneCommand {
  tune::TuneOptions options;
  std::string resume_dir;
};

// The first SIGINT or SIGTERM asks the job to stop cleanly (the workers
// checkpoint); a second one ends the command at once, and the workers with it.
void on_stop_signal(int sig) {
  tune::request_tune_stop(sig);
  ::signal(sig, SIG_DFL);
}

void run(TuneCommand& cmd, const CLI::App& sub) {
  auto& o = cmd.options;
  if (!cmd.resume_dir.empty()) {
    o.resume = true;
    o.job.out_dir = cmd.resume_dir;
    // Given, they must match the job's; not given, the job's own.
    if (sub.count("--model") == 0) o.job.model.clear();
    if (sub.count("--dataset") == 0) o.job.dataset.clear();
  }
  ::signal(SIGINT, on_stop_signal);
  ::signal(SIGTERM, on_stop_signal);
  ::signal(SIGPIPE, SIG_IGN);
  const auto outcome =
      tune::run_tune(o, std::filesystem::read_symlink("/proc/self/exe").string(), quick_profile_in_process);
  exit_status() = outcome.exit_code;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto cmd = std::make_shared<TuneCommand>();
  auto* sub = app.add_subcommand("tune", "Profile, plan, train at the chosen configuration, re-plan, report the bill");
  add_schema_options(*sub, cmd->options);
  sub->add_option("--resume", cmd->resume_dir, "Continue the job in this directory");
  sub->get_option("--no-history")->excludes("--history");
  sub->callback([cmd, sub] { run(*cmd, *sub); });
}

}  // namespace tula::cli
