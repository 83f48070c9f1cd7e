// LARS (You, Gitman, Ginsburg 2017): momentum SGD whose step for each weight
// tensor is scaled by a layer-wise trust ratio
//   trust = eta * |w| / (|g| + wd * |w|),
// so every layer moves by about the same fraction of its norm whatever its
// gradient's scale. Biases and batch-norm parameters are neither adapted nor
// decayed (they take the plain momentum step), as in the reference
// implementations used for large-batch ImageNet training.
// Nesterov momentum, where asked, looks ahead along the trust-scaled step.
#pragma once
#include "optim/optimizer.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::optim {

class LARS : public Optimizer {
 public:
  LARS(std::vector<ParamRef> params, OptimizerOptions options);
  std::string name() const override { return "lars"; }
  void step(const StepStats& stats) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  nlohmann::json report() const override;

 private:
  void foreach_step();

  OptimizerOptions options_;
  std::vector<torch::Tensor> momentum_;
  // The last step's trust ratios: on the host (per-tensor path), or on the
  // device until report() reads them (foreach path).
  mutable std::vector<double> last_trust_;
  torch::Tensor trust_device_;
};

}  // namespace tula::optim
