// The hardware one configuration runs on: a price-catalog entry, or the
// profiled machine itself (predictor.hpp's profiled_machine()). Apart from
// the predictor so that a profile's pilot runs can say where they ran.
#pragma once
#include <cstdint>
#include <string>

namespace tula::predict {

struct MachineSpec {
  std::string name = "profiled";
  std::string device_kind = "cpu";
  int64_t devices_per_node = 1;
  int64_t max_workers_per_node = 1;  // GPUs: one worker per device; CPUs: up to the cores
  int64_t device_memory_bytes = 0;   // per device; CPU workers on a node share it
  double price_per_hour = 0;         // per node
  double network_gbps = 0;           // between nodes; 0: the profiled link is used
  double network_latency_s = 0;      // between nodes
  double relative_speed = 1;         // compute speed relative to the profiled device
  // Across nodes: the share of the allreduce's time whose work (socket
  // copies, sums) runs on the cores the workers compute on, so that backward
  // loses it even where the allreduce is hidden behind it (CPU nodes whose
  // cores the workers fill). 0: none (a GPU's NCCL kernels, or spare cores).
  double allreduce_on_cores = 0;
};

}  // namespace tula::predict
