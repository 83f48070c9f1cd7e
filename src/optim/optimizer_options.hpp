// What `--optimizer` and its flags choose: the options every optimizer shares,
// and one small struct per optimizer for what only it has. Plain data, no
// LibTorch; validated once, here, for every caller (the trainer, the profiler,
// the tests).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tula::optim {

// LARS: the layer-wise trust ratio eta * |w| / (|g| + wd |w| + eps).
struct LarsOptions {
  double trust_coefficient = 0.001;  // eta
  double eps = 1e-9;
};

// Adam's moments, for LAMB and AGS's "adam" direction; the first moment's
// decay beta1 is the shared `momentum`, which plays the same part.
struct AdamMoments {
  double beta2 = 0.999;
  double eps = 1e-6;
};

// AGS (docs/ags.md): bounds on the per-tensor factors and the statistics that
// set them.
struct AgsOptions {
  // 0.25, not 1: at 1 the floor cancelled the trend's damping in the sharp
  // early phase, where the noise gain is near 1 (docs/benchmarks/generalization.md, "What
  // limits AGS at 8192").
  double s_min = 0.25;
  double s_max = 0.0;          // 0: B / B_ref (the linear-scaling limit), at least s_min
  bool bounded = true;         // false: no clipping at all (ablation)
  double trust_exponent = 0.5;
  double ema = 0.95;           // smoothing of the noise estimates and the long-run norm
  double recent_ema = 0.5;     // smoothing of the recent norm (trend)
  bool use_noise = true;       // ablations: each statistic can be switched off
  bool use_trust = true;
  bool use_trend = true;
  bool per_layer = false;      // one factor per layer (a module's tensors) instead of per tensor
  // What the factors scale: "momentum" (momentum SGD on s_p g_p) or "adam"
  // (s_p times Adam's per-coordinate normalized step, weight decay decoupled,
  // the trust ratio taken against that step's norm).
  std::string direction = "momentum";
  AdamMoments adam;            // direction "adam" only
};

struct OptimizerOptions {
  std::string name = "sgd";  // one of optimizer_names()
  double lr = 0.1;           // the peak rate, at the schedule's reference batch
  double momentum = 0.9;     // LAMB: beta1
  double weight_decay = 5e-4;
  bool nesterov = false;     // sgd, lars and ags; refused for lamb
  LarsOptions lars;
  AdamMoments lamb;
  AgsOptions ags;
  // How a step is applied: "foreach" (multi-tensor operators over all tensors,
  // no host read; kernels/foreach_update.hpp), "per-tensor" (a loop over
  // the tensors; on the CPU a one-pass kernel each), or "auto": foreach on a
  // GPU, per-tensor on the CPU, where it is the faster (docs/gpu.md).
  std::string update = "auto";

  // Throws std::invalid_argument naming the option and the reason.
  void validate() const;
};

// The optimizers make_optimizer builds, in the order --help lists them.
const std::vector<std::string>& optimizer_names();

// "sgd, lars, lamb, ags": for messages.
std::string optimizer_name_list();

}  // namespace tula::optim
