// The configuration space the planner enumerates for each machine type:
// nodes x workers per node x per-worker batch x accumulation steps, bounded by
// the machine (max nodes, workers per node), device memory (the largest
// per-worker batch that fits) and the data (global batch <= training set);
// for a fixed number of epochs, also statistical efficiency (batch_cap.hpp).
#pragma once
#include <cstdint>
#include <vector>

namespace tula::plan {

struct SpaceOptions {
  std::vector<int64_t> nodes;               // empty: 1, 2, 4, ... up to each machine's max_nodes (and it)
  std::vector<int64_t> workers_per_node;    // empty: 1, 2, 4, ... up to its max_workers_per_node (and it)
  std::vector<int64_t> batch_per_worker;    // empty: 1, 2, 4, ... up to the memory limit (and the limit)
  std::vector<int64_t> accumulation_steps;  // empty: 1, 2, 4, 8
  int64_t min_global_batch = 1;
  // 0: the training set size (the engine refuses more), and for fixed epochs
  // the cap of batch_cap.hpp; > 0: this bound instead of both.
  int64_t max_global_batch = 0;
  int64_t max_batch_per_worker = 1 << 16;   // cap of the default per-worker grid
  // The gradient noise scale a caller measured (a tune job's pilot); 0: none.
  // Fixed-epoch plans cap the global batch at it, ahead of a statistical
  // model's (batch_cap.hpp).
  double b_noise = 0;
};

// 1, 2, 4, ... <= max, and max itself when `include_max` and not a power of two.
std::vector<int64_t> powers_of_two_upto(int64_t max, bool include_max = true);

}  // namespace tula::plan
