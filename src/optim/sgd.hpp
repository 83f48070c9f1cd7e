// SGD with momentum and weight decay, with PyTorch's torch.optim.SGD semantics:
// g += wd * w; buf = momentum * buf + (1 - dampening) * g; w -= lr * buf
// (nesterov: w -= lr * (g + momentum * buf)).
#pragma once
#include "optim/optimizer.hpp"

namespace tula::optim {

struct SGDOptions {
  double lr = 0.1;
  double momentum = 0.9;
  double weight_decay = 0.0;
  double dampening = 0.0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<ParamRef> params, SGDOptions options);
  std::string name() const override { return "sgd"; }
  void step(const StepStats& stats) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

 private:
  SGDOptions options_;
  std::vector<torch::Tensor> momentum_;  // undefined until the first step
};

}  // namespace tula::optim
