// LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning"): Adam's
// bias-corrected moments, decoupled weight decay, and LARS's layer-wise trust
// ratio on the resulting update:
//   r = m_hat / (sqrt(v_hat) + eps) + wd * w;   w -= lr * |w| / |r| * r.
// Biases and batch-norm parameters take the Adam step without decay or trust.
// The first moment decays at beta1 = options.momentum, the second at
// options.lamb.beta2.
#pragma once
#include "optim/optimizer.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::optim {

class LAMB : public Optimizer {
 public:
  LAMB(std::vector<ParamRef> params, OptimizerOptions options);
  std::string name() const override { return "lamb"; }
  void step(const StepStats& stats) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  nlohmann::json report() const override;

 private:
  void foreach_step();

  OptimizerOptions options_;
  std::vector<torch::Tensor> exp_avg_, exp_avg_sq_;
  int64_t steps_ = 0;
  // The last step's trust ratios: on the host (per-tensor path), or on the
  // device until report() reads them (foreach path).
  mutable std::vector<double> last_trust_;
  torch::Tensor trust_device_;
};

}  // namespace tula::optim
