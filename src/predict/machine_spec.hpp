// The hardware one configuration runs on: a price-catalog entry, or the
// profiled machine itself (predictor.hpp's profiled_machine()). Apart from
// the predictor so that a profile's pilot runs can say where they ran.
#pragma once
#include <cstdint>
#include <string>

namespace tula::predict {

// The link between the devices of one node (docs/devices.md): what a ring
// allreduce's steps inside the node run over. Bandwidth is per device and
// direction, the figure a ring's bus bandwidth is bounded by.
struct NodeLink {
  std::string kind;            // "nvlink", "pcie", ... (descriptive)
  double gbytes_per_s = 0;     // 0: not given (the profile's measured ring is used inside the node)
  double latency_s = 0;        // per ring step; 0: the profile's measured latency
};

struct MachineSpec {
  std::string name = "profiled";
  std::string device_kind = "cpu";
  int64_t devices_per_node = 1;
  int64_t max_workers_per_node = 1;  // GPUs: one worker per device; CPUs: up to the cores
  int64_t device_memory_bytes = 0;   // per device; CPU workers on a node share it
  double price_per_hour = 0;         // per node
  double network_gbps = 0;           // between nodes; 0: the profiled link is used
  double network_latency_s = 0;      // between nodes
  // Compute speed relative to the profiled device: the factor the profiled
  // times are divided by. A catalog states its speeds against a device it
  // names; the planner turns them into this factor for one profile
  // (plan/device_speed.hpp), and `speed_note` says how.
  double relative_speed = 1;
  std::string speed_note;
  // The accelerator, as the device names itself (CUDA's device name, e.g.
  // "NVIDIA H100 80GB HBM3"); "": not named (CPU types, older catalogs).
  std::string accelerator_model;
  NodeLink intra_node;
  // Across nodes: the share of the allreduce's time whose work (socket
  // copies, sums) runs on the cores the workers compute on, so that backward
  // loses it even where the allreduce is hidden behind it (CPU nodes whose
  // cores the workers fill). 0: none (a GPU's NCCL kernels, or spare cores).
  double allreduce_on_cores = 0;
};

}  // namespace tula::predict
