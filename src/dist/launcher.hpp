// `tula launch`: starts the local workers of a data-parallel job with the
// variables torchrun sets, forwards SIGINT/SIGTERM to them, and if any worker
// fails stops the others and reports which rank died and how.
// No LibTorch here.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace tula::dist {

struct LaunchOptions {
  int nproc_per_node = 1;
  int nnodes = 1;
  int node_rank = 0;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::vector<std::string> command;  // the worker's argv; argv[0] searched in PATH
  // After one worker fails, how long the others get after SIGTERM before SIGKILL.
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  bool quiet = false;
};

struct LaunchResult {
  int exit_code = 0;          // 0 when every worker exited 0
  int failed_rank = -1;       // global rank of the first worker that failed
  std::string failure;        // "exit status 3" / "killed by signal 9 (SIGKILL)"
};

// Runs the workers to completion. Validates the options first (throws
// std::invalid_argument on nproc < 1, node_rank >= nnodes, empty command).
LaunchResult launch_workers(const LaunchOptions& options);

}  // namespace tula::dist
