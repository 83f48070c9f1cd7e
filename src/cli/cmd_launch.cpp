// `tula launch`: the command-line face of distributed/launcher.hpp.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "distributed/launcher.hpp"

namespace tula::cli {

namespace {

constexpr const char* kDescription =
    "Start the workers of a data-parallel job on this node, like torchrun";

constexpr const char* kFooter =
    "\nEach of the --nproc workers runs CMD with RANK, WORLD_SIZE, LOCAL_RANK,\n"
    "LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR and MASTER_PORT set, and\n"
    "OMP_NUM_THREADS = cores / nproc unless already set. Everything from CMD on is\n"
    "the worker's command line, options included; \"--\" before CMD is optional.\n"
    "\n"
    "Ctrl-C, SIGTERM, SIGHUP and SIGQUIT are passed on to the workers; a second one\n"
    "kills them. If a worker fails, the others get SIGTERM, then SIGKILL after\n"
    "--kill-grace. The exit status is the failed worker's: its exit status, 128 + N\n"
    "if it was killed by signal N, 127 if CMD was not found; 128 + N if the launcher\n"
    "itself was stopped by signal N.\n"
    "\n"
    "Examples:\n"
    "  tula launch --nproc 4 -- tula train ...\n"
    "  # two nodes, once on each:\n"
    "  tula launch --nproc 8 --nnodes 2 --node-rank 0 --master-addr node1 -- tula train ...\n"
    "  tula launch --nproc 8 --nnodes 2 --node-rank 1 --master-addr node1 -- tula train ...";

// CLI11's PositiveNumber reports "not in range 0 to 1.79769e+308".
CLI::Validator at_least(int min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int value = 0;
        if (CLI::detail::lexical_cast(text, value) && value >= min) return {};
        return fmt::format("expected an integer >= {}, got {}", min, text);
      },
      "");
}

}  // namespace

void add_launch_command(CLI::App& app) {
  auto options = std::make_shared<distributed::LaunchOptions>();
  auto grace_seconds = std::make_shared<double>(
      std::chrono::duration<double>(options->kill_grace).count());

  CLI::App* cmd = app.add_subcommand("launch", kDescription);
  cmd->footer(kFooter);
  // torchrun-style: the first positional starts the worker's command, so its
  // own options (even ones named like ours) are not parsed here.
  cmd->positionals_at_end();

  cmd->add_option("--nproc,--nproc-per-node", options->nproc_per_node,
                  "Workers to start on this node (one per GPU, or a few per CPU node)")
      ->required()
      ->check(at_least(1));
  cmd->add_option("--nnodes", options->nnodes, "Nodes in the job, each running `tula launch`")
      ->capture_default_str()
      ->check(at_least(1));
  cmd->add_option("--node-rank", options->node_rank,
                  "This node's index in [0, nnodes); its workers get the global ranks from "
                  "node-rank * nproc on")
      ->capture_default_str()
      ->check(at_least(0));
  cmd->add_option("--master-addr", options->master_addr,
                  "Host of the node with rank 0, reachable from every node (required when "
                  "--nnodes > 1)")
      ->capture_default_str();
  cmd->add_option("--master-port", options->master_port,
                  "Free TCP port on the master host for the rendezvous")
      ->capture_default_str()
      ->check(CLI::Range(1, 65535));
  cmd->add_option("--kill-grace", *grace_seconds,
                  "Seconds the other workers get after SIGTERM, once one has failed, before "
                  "SIGKILL")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_flag("-q,--quiet", options->quiet, "Do not report failures and signals on stderr");
  cmd->add_option("CMD", options->command, "The worker's program and its arguments")
      ->required()
      ->expected(1, -1);

  cmd->callback([cmd, options, grace_seconds] {
    if (options->node_rank >= options->nnodes) {
      throw CLI::ValidationError(
          "--node-rank", fmt::format("must be below --nnodes ({}), got {}", options->nnodes, options->node_rank));
    }
    // Loopback cannot be reached from the other nodes; without this check they
    // would only time out at the rendezvous.
    if (options->nnodes > 1 && cmd->count("--master-addr") == 0) {
      throw CLI::RequiredError("--master-addr (needed when --nnodes > 1)");
    }
    options->kill_grace = std::chrono::milliseconds(
        static_cast<long long>(*grace_seconds * 1000.0 + 0.5));
    const distributed::LaunchResult result = distributed::launch_workers(*options);
    exit_status() = result.exit_code;
  });
}

}  // namespace tula::cli
