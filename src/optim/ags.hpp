// AGS, adaptive gradient scaling: momentum SGD whose gradient for each
// parameter tensor p is multiplied by a factor s_p in [s_min, s_max], chosen
// each step from statistics the engine already measures. The rule, its
// reasoning and the convergence condition the bounds give are in
// docs/ags.md; in short, with B the global batch and B_ref the reference batch
// the learning rate was tuned at:
//   noise gain  r_p = (S_p / B_ref + G2_p) / (S_p / B + G2_p), from the
//               per-tensor gradient noise S_p and signal G2_p (unbiased
//               two-batch estimators over per-worker and averaged gradients,
//               smoothed over steps): how many reference-batch steps one step
//               at B is worth for this tensor (1 .. B/B_ref);
//   trust       t_p = (tau_p / geomean(tau))^gamma, tau_p = |w_p| / |g_p|:
//               layers whose gradient is small for their weights move more;
//   trend       d_p = min(1, sqrt(long-run |g_p|^2 / recent |g_p|^2)): damps a
//               tensor while its gradient norm is rising (the sharp early
//               phase, Figure 5 of the Tula paper);
//   s_p = clip(r_p * t_p * d_p, s_min * min(1, B / B_ref), s_max),
// and where that upper bound is at most 1 (at or below B_ref, by default)
// s_p = clip(r_p): under it trust and trend could only lower the tuned step.
// With per_layer, p is a layer (a module's weight and bias together): its
// statistics are the sums over its tensors, and its tensors share s_p.
// With direction "adam" the factor scales Adam's per-coordinate normalized
// step u_p = m_p / (sqrt(v_p) + eps) (+ decoupled weight decay) instead of
// the gradient, and the trust ratio is taken against |u_p| (smoothed over
// earlier steps): w_p -= lr s_p u_p.
// Every statistic comes from earlier steps (and the current weights), never
// from the gradient being scaled, which is what the convergence bound needs.
#pragma once
#include "optim/optimizer.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::optim {

class AGS : public Optimizer {
 public:
  // `reference_batch`: the global batch B_ref at which options.lr was tuned.
  AGS(std::vector<ParamRef> params, OptimizerOptions options, int64_t reference_batch);
  std::string name() const override { return "ags"; }
  void step(const StepStats& stats) override;
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;
  nlohmann::json report() const override;
  // The factors used by the last step, per parameter tensor (tests, analysis).
  const std::vector<double>& factors() const;
  // The bounds in force at global batch B.
  std::pair<double, double> bounds(int64_t global_batch) const;

 private:
  static std::vector<std::vector<size_t>> make_units(const std::vector<ParamRef>& params, bool per_layer);
  void compute_factors(int64_t global_batch);
  void observe(const StepStats& stats);
  // Direction "adam": updates tensor i's moments and returns its step u_i.
  torch::Tensor adam_step(size_t i);
  // The foreach path (direction "momentum"): the same rule computed with
  // tensor ops on the parameters' device, the statistics kept there, and the
  // update by multi-tensor operators; nothing is read back to the host until
  // report(), factors() or save() asks.
  void foreach_step(const StepStats& stats);
  void compute_factors_on_device(int64_t global_batch);
  void observe_on_device(const StepStats& stats, const std::vector<size_t>& with_grad,
                         const std::vector<torch::Tensor>& grads);
  void upload_state();
  void download_state() const;

  OptimizerOptions options_;
  int64_t reference_batch_;
  std::vector<torch::Tensor> momentum_;   // direction "adam": the first moment
  std::vector<torch::Tensor> second_moment_;  // direction "adam" only
  // Per tensor, smoothed: gradient signal |G|^2 and noise tr(Sigma) estimates
  // (no bias correction needed: only their ratio is used), long-run and recent
  // squared norms of the averaged gradient (bias-corrected by the counts).
  // (Mutable: the foreach path keeps them on the device and copies them here
  // only when they are read.)
  mutable std::vector<double> signal_, noise_, long_norm_, recent_norm_;
  // Direction "adam": the smoothed squared norm of each tensor's step u_p
  // (the trust ratio's denominator; with "momentum" that is long_norm_).
  std::vector<double> step_norm_;
  int64_t observed_ = 0, noise_observed_ = 0;
  // What the last step did, per tensor.
  struct LastStep {
    std::vector<double> factors;
    // The three terms of the factors, before clipping (the metrics stream
    // reports their distributions: which term drives the factors).
    std::vector<double> gains, trusts, trends;
    double clipped_low = 0, clipped_high = 0;  // factors clipped at each bound
  };
  mutable LastStep last_;
  // Tensors that share one factor (indices into params_): one each, or one
  // layer's tensors with --ags-per-layer.
  std::vector<std::vector<size_t>> units_;
  // The foreach path's state on the device (double), valid while
  // on_device_: the statistics, the last step's factors and terms, the
  // clipped counts, each tensor's unit and whether its weight counts for trust.
  struct DeviceState {
    torch::Tensor signal, noise, long_norm, recent_norm;
    torch::Tensor factors, gains, trusts, trends, clipped;
    torch::Tensor unit_of, weighs;
  };
  bool on_device_ = false;
  mutable bool host_stale_ = false;  // the device holds a newer step than the vectors
  DeviceState device_;
};

}  // namespace tula::optim
