// LAMB (You et al. 2019, "Large Batch Optimization for Deep Learning"): Adam's
// bias-corrected moments, decoupled weight decay, and LARS's layer-wise trust
// ratio on the resulting update:
//   r = m_hat / (sqrt(v_hat) + eps) + wd * w;   w -= lr * |w| / |r| * r.
// Biases and batch-norm parameters take the Adam step without decay or trust.
#pragma once
#include "optim/optimizer.hpp"

namespace tula::optim {

struct LAMBOptions {
  double lr = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.01;
};

class LAMB : public Optimizer {
 public:
  LAMB(std::vector<ParamRef> params, LAMBOptions options);
  std::string name() const override { return "lamb"; }
  void step(const StepStats& stats) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  nlohmann::json report() const override;

 private:
  LAMBOptions options_;
  std::vector<torch::Tensor> exp_avg_, exp_avg_sq_;
  int64_t steps_ = 0;
  std::vector<double> last_trust_;
};

}  // namespace tula::optim
