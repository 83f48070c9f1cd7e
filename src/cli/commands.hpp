// Each `tula` subcommand registers itself on the CLI11 app from its own file.
// A subcommand's callback returns through CLI11; failures throw and main()
// turns them into a message on stderr and a non-zero exit.
#pragma once
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tula::cli {

// The engine commands train, time or build networks with LibTorch; their
// files are compiled only in a build with TULA_WITH_TORCH=ON.
void add_models_command(CLI::App& app);          // cmd_models.cpp
void add_launch_command(CLI::App& app);          // cmd_launch.cpp
void add_train_command(CLI::App& app);           // cmd_train.cpp
void add_profile_command(CLI::App& app);         // cmd_profile.cpp
void add_analyze_command(CLI::App& app);         // cmd_analyze.cpp
void add_tune_command(CLI::App& app);            // cmd_tune.cpp
// `tula profile ARGS` in this process, for flags ARGS that ask for a quick profile
// through the profile cache (--quick --cache): read from the cache or
// measured and cached, written to --out, its lines (and warnings, prefixed
// "warning: ") to `log`, as the command would (cmd_profile.cpp). `tula tune`
// gets its profile so, without a second LibTorch start-up. Throws what the
// command would report.
void quick_profile_in_process(const std::vector<std::string>& args,
                              const std::function<void(const std::string&)>& log);

// The planning commands read a profile measured anywhere and need no LibTorch.
void add_predict_command(CLI::App& app);   // cmd_predict.cpp
void add_plan_command(CLI::App& app);      // cmd_plan.cpp
void add_simulate_command(CLI::App& app);  // cmd_simulate.cpp

// The service and its client need no LibTorch either.
void add_serve_command(CLI::App& app);  // cmd_serve.cpp
void add_jobs_command(CLI::App& app);   // cmd_jobs.cpp

// What differs between a build with the training engine (engine.cpp) and one
// without it (no_engine.cpp, where the engine commands are stand-ins that fail
// with a message saying how to get them).
void add_engine_commands(CLI::App& app);
// Process-wide settings the engine needs before its first tensor.
// May execute the program again with a settled environment (argv: main's).
void prepare_engine(char** argv);
// The text main() prints for an error a command threw.
std::string error_message(const std::exception& error);

// argv[1..] as given, for subcommands that re-run the binary (train --nproc).
std::vector<std::string>& raw_arguments();

// Set by a subcommand that wants main() to exit with a specific status.
int& exit_status();

}  // namespace tula::cli
