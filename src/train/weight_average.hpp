// The weights an evaluation scores: an exponential moving average of the
// model's parameters (and floating-point buffers) over the run's steps.
//
// At a constant learning rate, which a run to a target trains at, the
// weights themselves wander around the minimum they approach, so their
// accuracy jumps a point or more from one evaluation to the next and the step
// at which a target is first seen is partly chance. Their average over the
// recent steps sits nearer the middle of that wandering (Polyak averaging):
// it reads about a third as noisy, and where the curve flattens just below
// a target it sees the target sooner (LeNet-5 to 86%: 2.50 epochs against
// 4.75), which is what the forecast of the crossing and a run that stops at
// the target need (docs/benchmarks/decisions.md, "Evaluating the averaged weights").
//
// The average's decay at global step t is min(decay, (1 + t) / (10 + t)): a
// short memory early, when the weights move fast and an old average would
// lag them, the full decay later. Counted in global steps, it resumes from a
// checkpoint and across a resize where it stood.
#pragma once
#include <cstdint>
#include <vector>

#include <torch/nn/module.h>
#include <torch/serialize/archive.h>

namespace tula::train {

class WeightAverage {
 public:
  // decay in (0, 1); starts from the model's weights as they are.
  WeightAverage(torch::nn::Module& model, double decay);

  // After the optimizer step that made `global_step` steps in all (>= 1).
  void update(int64_t global_step);

  // Starts again from the model's weights as they are (a run resumed from a
  // checkpoint that kept no average).
  void reset();

  // The model holds the averaged weights while the returned object lives,
  // its own ones again after.
  class Swapped {
   public:
    explicit Swapped(WeightAverage& average);
    ~Swapped();
    Swapped(const Swapped&) = delete;
    Swapped& operator=(const Swapped&) = delete;

   private:
    WeightAverage& average_;
    std::vector<torch::Tensor> own_;
  };
  Swapped swap_in() { return Swapped(*this); }

  // The decay applied at `global_step`.
  double decay_at(int64_t global_step) const;

  void save(torch::serialize::OutputArchive& archive) const;
  // Throws std::runtime_error when the archive's tensors do not match the model's.
  void load(torch::serialize::InputArchive& archive);

 private:
  double decay_;
  std::vector<torch::Tensor> live_;     // the model's parameters and floating-point buffers
  std::vector<torch::Tensor> average_;  // their averages, one for one
};

}  // namespace tula::train
