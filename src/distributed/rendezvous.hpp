// Who this process is in a data-parallel job, read from the environment the
// way launchers set it: torchrun (RANK, WORLD_SIZE, LOCAL_RANK,
// LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Slurm (SLURM_PROCID,
// SLURM_NTASKS, SLURM_LOCALID, SLURM_NTASKS_PER_NODE, SLURM_JOB_NODELIST) and
// Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE).
// Plain C++ (no LibTorch): it only reads the environment.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace tula::distributed {

struct RendezvousInfo {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string source = "default";  // "torchrun", "slurm", "openmpi", "default"
};

// Reads a variable; injectable so tests need not touch the real environment.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_environment();

// Precedence: torchrun's variables (explicit, keyed on RANK), then Open MPI,
// then Slurm, then a single process. Open MPI comes before Slurm because under
// `mpirun` inside a Slurm allocation the SLURM_* variables describe the batch
// step or mpirun's daemons, not the rank. MASTER_ADDR/MASTER_PORT override
// what Slurm or MPI imply (for Slurm, the first host of the step's or job's
// node list and a port derived from SLURM_JOB_ID; for MPI, 127.0.0.1 unless
// set, which is an error when the job spans nodes). Throws
// std::invalid_argument naming the variable and its value for malformed or
// inconsistent values (rank >= world size, non-numeric, port out of range, a
// WORLD_SIZE that disagrees with Slurm's or MPI's).
RendezvousInfo rendezvous_from_environment(const EnvLookup& env = process_environment());

// The first host of a Slurm node list: "node[003-005,9],gpu1" -> "node003".
std::string first_slurm_host(const std::string& nodelist);

}  // namespace tula::distributed
