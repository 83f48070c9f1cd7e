// Where a tune job's workers run: local processes on this machine, a Slurm
// allocation, or the nodes of an emulated cluster on this machine
// (scripts/emulated-cluster). The runner (runner.hpp) and later the service start, watch and
// stop workers only through this interface, so a job behaves the same on
// every backend: the workers are `tula train` processes that rendezvous by
// the engine's own rules (torchrun's variables from `tula launch`, Slurm's
// under srun),
// write metrics and checkpoints into the job's directory, and on SIGTERM
// finish their step, checkpoint and exit.
// No LibTorch here.
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/catalog.hpp"

namespace tula::tune {

// The backend cannot run anything: sbatch missing, the controller down, ...
// The message says what was tried and what failed.
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One start of a job's workers.
struct WorkerLaunch {
  int workers = 1;                          // worker processes in all
  int nodes = 1;                            // over this many nodes (a backend that places_nodes())
  std::string machine_type;                 // of this catalog machine type (the emulated cluster's)
  int cpus_per_worker = 0;                  // CPUs each worker holds (Slurm --cpus-per-task); 0: not asked
  int gpus_per_node = 0;                    // GPUs each node holds (Slurm --gpus-per-node); 0: none
  std::vector<std::string> worker_command;  // one worker's argv: {"/path/tula", "train", ...}, no --nproc
  std::string log_path;                     // the launch's stdout and stderr are appended here
  std::string work_dir;                     // the job's directory (cwd of the workers)
  std::string name = "tula-tune";           // a label (Slurm job name)
};

// How a launch ended.
struct LaunchExit {
  int exit_code = 0;        // 0: every worker exited 0; else the first failure's status, 128 + N for signal N
  std::string description;  // for people: "exit status 1 (rank 1)", "cancelled", "killed by signal 9"
};

class RunningLaunch {
 public:
  virtual ~RunningLaunch() = default;
  // Waits at most `timeout` for every worker to end; nullopt while some run.
  virtual std::optional<LaunchExit> wait_for(std::chrono::milliseconds timeout) = 0;
  // Asks every worker to stop cleanly (SIGTERM: finish the step, checkpoint,
  // exit); returns at once. wait_for then reports the end.
  virtual void request_stop() = 0;
  // Ends every worker now (SIGKILL, scancel). Safe to call after the end.
  virtual void kill() = 0;
  // Whether the launch waits in the backend's queue for its nodes now
  // (Slurm: PENDING); a waiting launch holds no node.
  virtual bool queued() const { return false; }
  // The seconds it waited in the queue before its nodes were given (Slurm:
  // SubmitTime to StartTime), once they were; nullopt while it waits, or
  // where the backend has no queue.
  virtual std::optional<double> queued_s() const { return std::nullopt; }
  // For people: "local launcher pid 1234", "slurm job 17".
  virtual std::string where() const = 0;
  // What identifies the launch across a restart of the process that started
  // it (pid and start time, Slurm job id), for re-adopting or stopping it.
  virtual nlohmann::json handle() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // "local", "slurm", "emulated"
  // Throws BackendError when this backend cannot start workers now.
  virtual void check_available() const = 0;
  // Whether one launch's workers may span several nodes; false: they all run
  // on one, whatever WorkerLaunch::nodes says.
  virtual bool places_nodes() const { return false; }
  // Limits `catalog` to what this backend can place (the emulated cluster's
  // nodes of each type); notes for people on what it changed.
  virtual std::vector<std::string> fit_catalog(plan::Catalog& /*catalog*/) const { return {}; }
  // Starts the workers; throws BackendError when they cannot be started.
  virtual std::unique_ptr<RunningLaunch> start(const WorkerLaunch& launch) = 0;
};

struct BackendOptions {
  std::string tula_binary;     // the `tula` executable workers run (and `tula launch` locally)
  std::string slurm_partition;  // empty: the cluster's default
  std::string cluster_state;    // the emulated cluster's state file (scripts/emulated-cluster)
  std::string slurm_conf;       // the Slurm backend's slurm.conf (SLURM_CONF); empty: the environment's
  std::chrono::milliseconds stop_grace{std::chrono::seconds(60)};  // request_stop to SIGKILL, when a caller enforces it
};

// "local", "slurm" or "emulated"; throws std::invalid_argument naming the choices.
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options);

std::unique_ptr<Backend> make_local_backend(const BackendOptions& options);     // local_backend.cpp
// `name` is what name() says: "slurm", or "emulated" for the emulated cluster's Slurm.
std::unique_ptr<Backend> make_slurm_backend(const BackendOptions& options,
                                            const std::string& name = "slurm");  // slurm_backend.cpp
// The Slurm backend on the emulated cluster's own Slurm (emulated_backend.cpp).
std::unique_ptr<Backend> make_emulated_backend(const BackendOptions& options);

}  // namespace tula::tune
