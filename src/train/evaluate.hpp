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
// first and last batch shapes' kernels and buffers are set up then): LeNet-5's
// first evaluation took 1.2-1.8x its later ones (docs/notebook/round-06.md,
// "Evaluations warmed at launch"), and the pilot's one evaluation, which
// calibrates the evaluation model, is its first. This runs the shard's first
// and last batch untimed and unscored, in the launch's start-up.
void warm_up_evaluation(models::Net& model, const std::shared_ptr<const data::Dataset>& test_set,
                        const data::TransformOptions& transform, int64_t batch_size, int rank, int world_size,
                        const torch::Device& device);

}  // namespace tula::train
