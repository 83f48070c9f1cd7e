// `--backend emulated`: the Slurm backend on the emulated cluster's own Slurm.
// `scripts/emulated-cluster start` runs a slurmctld and, inside each node's
// network namespace and cgroups, a slurmd (docs/slurm.md), and names its
// slurm.conf in the state file; this backend is the Slurm one with that
// slurm.conf, so a job on the emulated cluster runs exactly as on a real
// Slurm cluster: sbatch of the plan's layout, srun tasks inside the nodes,
// plans over the nodes sinfo lists as idle. The home-made launcher that
// entered the namespaces itself is gone. No LibTorch here.
#include "tune/backend.hpp"
#include "tune/emulated_cluster.hpp"

namespace tula::tune {

std::unique_ptr<Backend> make_emulated_backend(const BackendOptions& options) {
  const std::string path = options.cluster_state.empty() ? kDefaultClusterState : options.cluster_state;
  EmulatedCluster cluster;
  try {
    cluster = read_emulated_cluster(path);
  } catch (const std::runtime_error& e) {
    throw BackendError(e.what());
  }
  if (cluster.slurm_conf.empty()) {
    throw BackendError(path + " names no slurm.conf: the emulated cluster was started without Slurm "
                              "(TULA_CLUSTER_SLURM=0); --backend emulated runs jobs through its Slurm, so start "
                              "it with Slurm (scripts/emulated-cluster stop, start)");
  }
  BackendOptions slurm = options;
  slurm.slurm_conf = cluster.slurm_conf;
  return make_slurm_backend(slurm, "emulated");
}

}  // namespace tula::tune
