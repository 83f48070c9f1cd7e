// How the reducer groups parameters into allreduce buckets, as plain data:
// in reverse registration order (the order backward produces gradients), a
// parameter opens a new bucket when the current one has reached its cap (the
// first bucket's is small, so the first allreduce starts early, as in PyTorch
// DDP) or is of another kind (dtype, device). A parameter never splits, so a
// bucket may pass its cap by one parameter. The profile records the layout:
// the last bucket, filled when backward ends, is the allreduce that nothing
// hides (predict/overlap_model.hpp). No LibTorch.
#pragma once
#include <cstdint>
#include <vector>

#include "distributed/reducer_options.hpp"

namespace tula::distributed {

struct ParameterSlot {
  int64_t bytes = 0;
  int kind = 0;  // parameters of one bucket share it
};

// Groups of indices into `params` (registration order), in the order
// backward fills them.
std::vector<std::vector<int64_t>> bucket_layout(const std::vector<ParameterSlot>& params,
                                                const ReducerOptions& options);

// The bytes of each bucket of that layout, in the same order.
std::vector<int64_t> bucket_bytes(const std::vector<ParameterSlot>& params, const ReducerOptions& options);

}  // namespace tula::distributed
