// Batches drawn from a Dataset in a sampler's order, prepared (gathered and
// transformed) on a background thread one or more batches ahead of training,
// so data loading does not stall compute. Reports the time spent waiting.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "data/dataset.hpp"
#include "data/transform.hpp"

namespace tula::data {

struct LoaderOptions {
  int64_t batch_size = 0;
  int64_t prefetch = 2;       // batches prepared ahead; 0: prepare synchronously
  int64_t start_batch = 0;    // skip this many batches (resuming mid-epoch)
  uint64_t seed = 0;          // transform randomness: seed of batch i is mix(seed, i)
  TransformOptions transform;
  // Prepare batches in the idle scheduling class, so the prefetching thread
  // never preempts the training step's threads (see kernels/thread_limits.hpp).
  bool idle_priority = true;
  // Put each prepared batch in page-locked memory (on the producer thread), so
  // the copy to a GPU can run asynchronously (`non_blocking`). Needs CUDA.
  bool pin_memory = false;
  // Gather 8-bit pixels (Dataset::gather_bytes) and leave them so: a quarter
  // of the bytes to copy, converted on the device. The transform then only
  // crops and flips.
  bool bytes = false;
};

class PrefetchLoader {
 public:
  PrefetchLoader(std::shared_ptr<const Dataset> dataset, std::vector<int64_t> indices,
                 LoaderOptions options);
  ~PrefetchLoader();  // stops and joins the background thread
  PrefetchLoader(const PrefetchLoader&) = delete;
  PrefetchLoader& operator=(const PrefetchLoader&) = delete;

  // The next batch, or nullopt at the end. Rethrows an error of the producer.
  std::optional<Batch> next();
  // Number of batches this loader yields in all (counting skipped ones).
  int64_t num_batches() const;
  // Batches next() has still to yield.
  int64_t remaining() const;
  // Seconds the last next() call blocked waiting for the batch.
  double last_wait_seconds() const { return last_wait_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  double last_wait_ = 0.0;
};

}  // namespace tula::data
