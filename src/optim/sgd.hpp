// SGD with momentum and weight decay, with PyTorch's torch.optim.SGD semantics:
// g += wd * w; buf = momentum * buf + g; w -= lr * buf
// (nesterov: w -= lr * (g + momentum * buf)), tensor by tensor or over all
// tensors at once (OptimizerOptions::update).
#pragma once
#include "optim/optimizer.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::optim {

class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamRef> params, OptimizerOptions options);
  std::string name() const override { return "sgd"; }
  void step(const StepStats& stats) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  void foreach_step();

  OptimizerOptions options_;
  std::vector<torch::Tensor> momentum_;  // undefined until the first step
};

}  // namespace tula::optim
