// `tula launch`: starts the local workers of a data-parallel job with the
// variables torchrun sets, forwards SIGINT/SIGTERM to them, and if any worker
// fails stops the others and reports which rank died and how.
// No LibTorch here.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace tula::distributed {

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
  // The root cause: the first worker that failed on its own (a non-zero exit,
  // or a signal the launcher did not send), first by when it died, as the
  // order of the SIGCHLDs tells. Workers that fail after it (of a peer's
  // closed connection, or of the SIGTERM the launcher then sends), or after
  // the launcher was itself signalled, are not blamed. Since a killed
  // process's sockets close before its parent learns of its death, a worker
  // killed by a signal (not SIGPIPE) within a second of another's failing
  // exit status is taken as its cause. -1 for none.
  int failed_rank = -1;
  std::string failure;        // "exit status 3" / "killed by signal 9 (SIGKILL)"
};

// Runs the workers to completion. Validates the options first (throws
// std::invalid_argument on nproc < 1, node_rank >= nnodes, empty command).
//
// Each worker gets our environment plus RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, GROUP_RANK, GROUP_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
// and, unless set, OMP_NUM_THREADS = max(1, cores / nproc). Workers run in
// their own sessions (a terminal's Ctrl-C reaches only the launcher, which
// passes SIGINT/SIGTERM/SIGHUP/SIGQUIT on to each worker's process group; a
// second such signal while stopping means SIGKILL), and die with the launcher
// if it is killed outright. exit_code: 0; the first failed worker's exit
// status, or 128 + N if signal N killed it; 127 (126) if the command could not
// be found (executed); 128 + N if the launcher itself got signal N first.
// Every wait after a failure or signal is bounded (kill_grace, then SIGKILL).
// Installs signal handlers for its duration and restores them; one call at a
// time per process, from a thread that outlives the workers.
LaunchResult launch_workers(const LaunchOptions& options);

}  // namespace tula::distributed
