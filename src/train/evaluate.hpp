// Test-split evaluation, sharded across workers without padding (every test
// sample counted exactly once) and summed with one small allreduce.
#pragma once
#include <cstdint>
#include <memory>

#include "data/dataset.hpp"
#include "data/transform.hpp"
#include "distributed/communicator.hpp"
#include "models/zoo.hpp"

namespace tula::train {

struct EvalResult {
  double loss = 0.0;
  double accuracy = 0.0;  // share in [0, 1]
  int64_t samples = 0;
  double seconds = 0.0;
};

EvalResult evaluate(models::Net& model, const std::shared_ptr<const data::Dataset>& test_set,
                    const data::TransformOptions& transform, int64_t batch_size, int rank, int world_size,
                    distributed::Communicator* comm, const torch::Device& device);

// The evaluation's first pass in a process is slower than the later ones (the
// first and last batch shapes' kernels and buffers are set up then): a job's
// first evaluation took 1.3-1.8x its later ones (docs/benchmarks.md,
// "Evaluations warmed at launch"). This runs the shard's first and last batch
// untimed and unscored, so that every timed evaluation is a warm one: the
// pilot's, which calibrates the evaluation model, like the job's.
void warm_up_evaluation(models::Net& model, const std::shared_ptr<const data::Dataset>& test_set,
                        const data::TransformOptions& transform, int64_t batch_size, int rank, int world_size,
                        const torch::Device& device);

}  // namespace tula::train
