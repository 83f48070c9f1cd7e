// Distributed sampler: every rank gets a disjoint shard of the data set,
// reshuffled each epoch from (seed, epoch) identically on every rank, as
// torch.utils.data.DistributedSampler does.
#pragma once
#include <cstdint>
#include <vector>

namespace tula::data {

struct SamplerOptions {
  int64_t dataset_size = 0;
  int rank = 0;
  int world_size = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  // Pad by repeating samples so every rank gets the same count (as PyTorch);
  // with drop_last the tail that does not divide evenly is dropped instead.
  bool drop_last = false;
};

class DistributedSampler {
 public:
  explicit DistributedSampler(SamplerOptions options);
  // This rank's sample indices for `epoch`, in order.
  std::vector<int64_t> indices(int64_t epoch) const;
  // Samples per rank per epoch.
  int64_t per_rank() const;
  const SamplerOptions& options() const { return options_; }

 private:
  SamplerOptions options_;
};

}  // namespace tula::data
