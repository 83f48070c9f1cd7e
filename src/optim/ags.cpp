#include "optim/ags.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>
#include <torch/torch.h>

#include "kernels/foreach_update.hpp"
#include "kernels/momentum_update.hpp"
#include "kernels/squared_norm.hpp"
#include "optim/adam_direction.hpp"
#include "optim/factor_summary.hpp"

namespace tula::optim {

AGS::AGS(std::vector<ParamRef> params, OptimizerOptions options, int64_t reference_batch)
    : Optimizer(std::move(params), options.lr), options_(std::move(options)), reference_batch_(reference_batch) {
  options_.validate();
  if (reference_batch_ <= 0) throw std::invalid_argument("ags: the reference batch must be > 0");
  const auto n = params_.size();
  momentum_.resize(n);
  signal_.assign(n, 0.0);
  noise_.assign(n, 0.0);
  long_norm_.assign(n, 0.0);
  recent_norm_.assign(n, 0.0);
  step_norm_.assign(n, 0.0);
  second_moment_.resize(n);
  last_.factors.assign(n, 1.0);
  last_.gains.assign(n, 1.0);
  last_.trusts.assign(n, 1.0);
  last_.trends.assign(n, 1.0);
  units_ = make_units(params_, options_.ags.per_layer);
}

std::pair<double, double> AGS::bounds(int64_t global_batch) const {
  if (!options_.ags.bounded) return {0.0, std::numeric_limits<double>::infinity()};
  const double linear = static_cast<double>(global_batch) / static_cast<double>(reference_batch_);
  // Below the reference batch one step is worth less than a reference step
  // (the noise gain lies in [B / B_ref, 1]), so the floor scales down with the
  // batch; held at s_min, a small batch would run at the reference batch's
  // rate and train in its noise.
  const double low = options_.ags.s_min * std::min(1.0, linear);
  const double high = options_.ags.s_max > 0 ? options_.ags.s_max : std::max(options_.ags.s_min, linear);
  return {low, high};
}

// The units that share one factor: each tensor alone, or (per layer) the
// tensors of one module, named "<module>.<tensor>" (a layer's weight and bias).
std::vector<std::vector<size_t>> AGS::make_units(const std::vector<ParamRef>& params, bool per_layer) {
  std::vector<std::vector<size_t>> units;
  std::vector<std::string> modules;  // per layer: the module of each unit
  for (size_t i = 0; i < params.size(); ++i) {
    if (!per_layer) {
      units.push_back({i});
      continue;
    }
    const auto& name = params[i].name;
    const std::string module = name.substr(0, name.rfind('.'));  // the whole name when it has no dot
    const auto found = std::find(modules.begin(), modules.end(), module);
    if (found == modules.end()) {
      modules.push_back(module);
      units.push_back({i});
    } else {
      units[static_cast<size_t>(found - modules.begin())].push_back(i);
    }
  }
  return units;
}

void AGS::compute_factors(int64_t global_batch) {
  const double B = static_cast<double>(global_batch), B_ref = static_cast<double>(reference_batch_);
  const double long_correction = observed_ > 0 ? 1 - std::pow(options_.ags.ema, static_cast<double>(observed_)) : 1;
  const double recent_correction =
      observed_ > 0 ? 1 - std::pow(options_.ags.recent_ema, static_cast<double>(observed_)) : 1;
  // A unit's statistic is the sum over its tensors (squared norms and
  // variances add over the coordinates of a layer).
  auto sum = [](const std::vector<double>& per_tensor, const std::vector<size_t>& unit) {
    double total = 0.0;
    for (size_t i : unit) total += per_tensor[i];
    return total;
  };

  const auto [low, high] = bounds(global_batch);
  // The trust and trend terms shape a step around the noise gain's scale. Where
  // the upper bound is at most 1 (at or below the reference batch, by default)
  // they can only lower steps: a trust above 1 is clipped away while one below
  // it is kept, and the trend only damps. AGS there would be the tuned SGD at a
  // smaller rate (a mean factor of 0.93 at B_ref, docs/ags.md), so the factor
  // is the noise gain alone: at B_ref, 1, the step the rate was tuned for.
  const bool shaped = high > 1;

  // Trust ratios of the units' weight tensors (biases and norms excluded),
  // normalized by their geometric mean so the term redistributes step size
  // between units without changing its scale. The denominator is the norm of
  // what the factor scales: the gradient, or Adam's step.
  const auto& direction_norm = options_.ags.direction == "adam" ? step_norm_ : long_norm_;
  std::vector<double> tau(units_.size(), 0.0);
  double log_sum = 0.0;
  int counted = 0;
  if (shaped && options_.ags.use_trust && observed_ > 0) {
    for (size_t u = 0; u < units_.size(); ++u) {
      double w2 = 0.0, g2 = 0.0;
      for (size_t i : units_[u]) {
        if (params_[i].is_bias_or_norm) continue;
        w2 += kernels::squared_norm(params_[i].param);
        g2 += direction_norm[i] / long_correction;
      }
      if (g2 > 0 && w2 > 0) {
        tau[u] = std::sqrt(w2) / std::sqrt(g2);
        log_sum += std::log(tau[u]);
        ++counted;
      }
    }
  }
  const double tau_mean = counted > 0 ? std::exp(log_sum / counted) : 1.0;

  last_.clipped_low = last_.clipped_high = 0;
  for (size_t u = 0; u < units_.size(); ++u) {
    const auto& unit = units_[u];
    double gain = 1.0, trust = 1.0, trend = 1.0;
    if (options_.ags.use_noise && noise_observed_ > 0) {
      const double G2 = std::max(sum(signal_, unit), 1e-30), S = std::max(sum(noise_, unit), 0.0);
      gain = (S / B_ref + G2) / (S / B + G2);
    } else if (options_.ags.use_noise && B < B_ref) {
      gain = B / B_ref;  // no noise estimate yet (one worker has none): below B_ref, the smaller of the gain's limits
    }
    if (tau[u] > 0) trust = std::pow(tau[u] / tau_mean, options_.ags.trust_exponent);
    const double recent = sum(recent_norm_, unit);
    if (shaped && options_.ags.use_trend && observed_ > 0 && recent > 0) {
      trend = std::min(1.0, std::sqrt((sum(long_norm_, unit) / long_correction) / (recent / recent_correction)));
    }
    const double s = gain * trust * trend;
    for (size_t i : unit) {
      last_.gains[i] = gain;
      last_.trusts[i] = trust;
      last_.trends[i] = trend;
      if (s < low) ++last_.clipped_low;
      if (s > high) ++last_.clipped_high;
      last_.factors[i] = std::clamp(s, low, high);
    }
  }
}

void AGS::observe(const StepStats& stats) {
  const auto n = params_.size();
  std::vector<double> global = stats.global_grad_sq_per_tensor;
  if (global.size() != n) {  // not measured by the engine: measure here
    global.assign(n, 0.0);
    for (size_t i = 0; i < n; ++i) {
      if (params_[i].param.grad().defined()) global[i] = kernels::squared_norm(params_[i].param.grad());
    }
  }
  const double b = static_cast<double>(stats.local_batch), B = static_cast<double>(stats.global_batch);
  const bool two_batch_sizes = stats.local_grad_sq_per_tensor.size() == n && b > 0 && B > b;
  for (size_t i = 0; i < n; ++i) {
    long_norm_[i] = options_.ags.ema * long_norm_[i] + (1 - options_.ags.ema) * global[i];
    recent_norm_[i] = options_.ags.recent_ema * recent_norm_[i] + (1 - options_.ags.recent_ema) * global[i];
    if (two_batch_sizes) {
      // McCandlish et al. 2018, appendix A: unbiased estimates of |G|^2 and
      // tr(Sigma) from the norms at the per-worker and the global batch.
      const double local = stats.local_grad_sq_per_tensor[i];
      const double G2 = (B * global[i] - b * local) / (B - b);
      const double S = (local - global[i]) / (1 / b - 1 / B);
      signal_[i] = options_.ags.ema * signal_[i] + (1 - options_.ags.ema) * G2;
      noise_[i] = options_.ags.ema * noise_[i] + (1 - options_.ags.ema) * S;
    }
  }
  ++observed_;
  if (two_batch_sizes) ++noise_observed_;
}

torch::Tensor AGS::adam_step(size_t i) {
  auto& p = params_[i].param;
  auto u = adam_direction(p.grad(), momentum_[i], second_moment_[i], options_.momentum, options_.ags.adam,
                          observed_ + 1);
  if (!params_[i].is_bias_or_norm && options_.weight_decay != 0) u.add_(p, options_.weight_decay);
  step_norm_[i] = options_.ags.ema * step_norm_[i] + (1 - options_.ags.ema) * kernels::squared_norm(u);
  return u;
}

void AGS::step(const StepStats& stats) {
  if (options_.ags.direction == "momentum" && use_foreach(options_.update, params_)) {
    foreach_step(stats);
    return;
  }
  if (on_device_) {  // the path changed mid-run (not done by the engine): carry the state over
    download_state();
    on_device_ = false;
  }
  compute_factors(stats.global_batch);
  if (options_.ags.direction == "adam") {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < params_.size(); ++i) {
      if (params_[i].param.grad().defined()) params_[i].param.add_(adam_step(i), -lr_ * last_.factors[i]);
    }
    observe(stats);
    return;
  }
  kernels::MomentumUpdate u;
  u.lr = lr_;
  u.momentum = options_.momentum;
  u.weight_decay = options_.weight_decay;
  u.nesterov = options_.nesterov;
  for (size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i].param;
    if (!p.grad().defined()) continue;
    u.grad_scale = last_.factors[i];
    kernels::momentum_update(p, p.grad(), momentum_[i], u);
  }
  observe(stats);
}

const std::vector<double>& AGS::factors() const {
  download_state();
  return last_.factors;
}

nlohmann::json AGS::report() const {
  download_state();
  const double n = static_cast<double>(std::max<size_t>(1, last_.factors.size()));
  return {{"ags_factors", summarize_factors(last_.factors)},
          {"ags_noise_gain", summarize_factors(last_.gains)},
          {"ags_trust", summarize_factors(last_.trusts)},
          {"ags_trend", summarize_factors(last_.trends)},
          {"ags_clipped_low", last_.clipped_low / n},
          {"ags_clipped_high", last_.clipped_high / n}};
}

void AGS::save(torch::serialize::OutputArchive& archive) const {
  download_state();
  save_state(archive, "momentum", momentum_);
  auto pack = [](const std::vector<double>& v) { return torch::tensor(v, torch::kDouble); };
  archive.write("ags_signal", pack(signal_));
  archive.write("ags_noise", pack(noise_));
  archive.write("ags_long_norm", pack(long_norm_));
  archive.write("ags_recent_norm", pack(recent_norm_));
  if (options_.ags.direction == "adam") {
    save_state(archive, "second_moment", second_moment_);
    archive.write("ags_step_norm", pack(step_norm_));
  }
  archive.write("ags_counts", torch::tensor({observed_, noise_observed_}, torch::kLong));
}

void AGS::load(torch::serialize::InputArchive& archive) {
  on_device_ = false;  // the next foreach step uploads what is loaded here
  host_stale_ = false;
  load_state(archive, "momentum", params_, momentum_);
  auto unpack = [&](const char* key, std::vector<double>& out) {
    torch::Tensor t;
    if (!archive.try_read(key, t)) return;
    if (t.numel() != static_cast<int64_t>(out.size())) {
      throw std::runtime_error(fmt::format("ags: checkpoint {} has {} entries for {} parameter tensors", key,
                                           t.numel(), out.size()));
    }
    auto a = t.contiguous();
    std::copy(a.data_ptr<double>(), a.data_ptr<double>() + a.numel(), out.begin());
  };
  unpack("ags_signal", signal_);
  unpack("ags_noise", noise_);
  unpack("ags_long_norm", long_norm_);
  unpack("ags_recent_norm", recent_norm_);
  if (options_.ags.direction == "adam") {
    load_state(archive, "second_moment", params_, second_moment_);
    unpack("ags_step_norm", step_norm_);
  }
  torch::Tensor counts;
  if (archive.try_read("ags_counts", counts)) {
    observed_ = counts[0].item<int64_t>();
    noise_observed_ = counts[1].item<int64_t>();
  }
}

}  // namespace tula::optim

namespace tula::optim {
namespace {

torch::Tensor doubles_on(const std::vector<double>& v, const torch::Device& device) {
  return torch::tensor(v, torch::kDouble).to(device);
}

void copy_to(const torch::Tensor& t, std::vector<double>& out) {
  auto h = t.to(torch::kCPU, torch::kDouble).contiguous();
  out.assign(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
}

}  // namespace

void AGS::upload_state() {
  if (on_device_) return;
  const auto device = params_.front().param.device();
  device_.signal = doubles_on(signal_, device);
  device_.noise = doubles_on(noise_, device);
  device_.long_norm = doubles_on(long_norm_, device);
  device_.recent_norm = doubles_on(recent_norm_, device);
  device_.factors = doubles_on(last_.factors, device);
  device_.gains = doubles_on(last_.gains, device);
  device_.trusts = doubles_on(last_.trusts, device);
  device_.trends = doubles_on(last_.trends, device);
  device_.clipped = doubles_on({last_.clipped_low, last_.clipped_high}, device);
  std::vector<int64_t> unit_of(params_.size(), 0);
  for (size_t u = 0; u < units_.size(); ++u) {
    for (size_t i : units_[u]) unit_of[i] = static_cast<int64_t>(u);
  }
  device_.unit_of = torch::tensor(unit_of, torch::kLong).to(device);
  std::vector<double> weighs(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) weighs[i] = params_[i].is_bias_or_norm ? 0.0 : 1.0;
  device_.weighs = doubles_on(weighs, device);
  on_device_ = true;
}

void AGS::download_state() const {
  if (!on_device_ || !host_stale_) return;
  copy_to(device_.signal, signal_);
  copy_to(device_.noise, noise_);
  copy_to(device_.long_norm, long_norm_);
  copy_to(device_.recent_norm, recent_norm_);
  copy_to(device_.factors, last_.factors);
  copy_to(device_.gains, last_.gains);
  copy_to(device_.trusts, last_.trusts);
  copy_to(device_.trends, last_.trends);
  std::vector<double> clipped;
  copy_to(device_.clipped, clipped);
  last_.clipped_low = clipped[0];
  last_.clipped_high = clipped[1];
  host_stale_ = false;
}

// compute_factors() with tensor ops: a unit's statistic is an index_add over
// its tensors, the masks replace the loops' conditions. The branches left on
// the host depend only on counts and options, which the host knows.
void AGS::compute_factors_on_device(int64_t global_batch) {
  const double B = static_cast<double>(global_batch), B_ref = static_cast<double>(reference_batch_);
  const double long_correction = observed_ > 0 ? 1 - std::pow(options_.ags.ema, static_cast<double>(observed_)) : 1;
  const double recent_correction =
      observed_ > 0 ? 1 - std::pow(options_.ags.recent_ema, static_cast<double>(observed_)) : 1;
  const auto units = static_cast<int64_t>(units_.size());
  const auto opts = device_.long_norm.options();
  auto unit_sum = [&](const torch::Tensor& per_tensor) {
    return torch::zeros({units}, opts).index_add_(0, device_.unit_of, per_tensor);
  };
  const auto [low, high] = bounds(global_batch);
  const bool shaped = high > 1;

  auto tau = torch::zeros({units}, opts);
  auto tau_mean = torch::ones({}, opts);
  if (shaped && options_.ags.use_trust && observed_ > 0) {
    std::vector<torch::Tensor> weights;
    for (const auto& p : params_) weights.push_back(p.param);
    auto w2 = unit_sum(kernels::foreach_squared_norms(weights).to(torch::kDouble) * device_.weighs);
    auto g2 = unit_sum(device_.long_norm / long_correction * device_.weighs);
    auto valid = w2.gt(0).logical_and(g2.gt(0));
    tau = torch::where(valid, w2.sqrt() / g2.sqrt(), torch::zeros_like(w2));
    auto counted = valid.sum().to(torch::kDouble);
    auto log_sum = torch::where(valid, tau.log(), torch::zeros_like(tau)).sum();
    tau_mean = torch::where(counted.gt(0), (log_sum / counted.clamp_min(1)).exp(), torch::ones_like(log_sum));
  }
  auto gain = torch::ones({units}, opts);
  if (options_.ags.use_noise && noise_observed_ > 0) {
    auto G2 = unit_sum(device_.signal).clamp_min(1e-30), S = unit_sum(device_.noise).clamp_min(0.0);
    gain = (S / B_ref + G2) / (S / B + G2);
  } else if (options_.ags.use_noise && B < B_ref) {
    gain.fill_(B / B_ref);
  }
  auto trust = torch::where(tau.gt(0), (tau / tau_mean).pow(options_.ags.trust_exponent), torch::ones_like(tau));
  auto trend = torch::ones({units}, opts);
  if (shaped && options_.ags.use_trend && observed_ > 0) {
    auto recent = unit_sum(device_.recent_norm);
    auto ratio = (unit_sum(device_.long_norm) / long_correction) / (recent / recent_correction);
    trend = torch::where(recent.gt(0), ratio.sqrt().clamp_max(1.0), trend);
  }
  auto s = (gain * trust * trend).index_select(0, device_.unit_of);
  device_.gains = gain.index_select(0, device_.unit_of);
  device_.trusts = trust.index_select(0, device_.unit_of);
  device_.trends = trend.index_select(0, device_.unit_of);
  device_.clipped = torch::stack({s.lt(low).sum(), s.gt(high).sum()}).to(torch::kDouble);
  device_.factors = s.clamp(low, high);
}

void AGS::observe_on_device(const StepStats& stats, const std::vector<size_t>& with_grad,
                            const std::vector<torch::Tensor>& grads) {
  const auto n = static_cast<int64_t>(params_.size());
  const auto device = device_.long_norm.device();
  auto per_tensor = [&](const torch::Tensor& on_device, const std::vector<double>& on_host) {
    if (on_device.defined() && on_device.numel() == n) return on_device.to(device, torch::kDouble);
    if (static_cast<int64_t>(on_host.size()) == n) return doubles_on(on_host, device);
    return torch::Tensor();
  };
  torch::Tensor global = per_tensor(stats.global_grad_sq_device, stats.global_grad_sq_per_tensor);
  if (!global.defined() && static_cast<int64_t>(grads.size()) == n) {  // not measured by the engine: measure here
    global = kernels::foreach_squared_norms(grads).to(torch::kDouble);
  } else if (!global.defined()) {
    global = torch::zeros({n}, device_.long_norm.options());
    if (!grads.empty()) {
      std::vector<int64_t> index(with_grad.begin(), with_grad.end());
      global.index_copy_(0, torch::tensor(index, torch::kLong).to(device),
                         kernels::foreach_squared_norms(grads).to(torch::kDouble));
    }
  }
  const double ema = options_.ags.ema, recent_ema = options_.ags.recent_ema;
  device_.long_norm.mul_(ema).add_(global, 1 - ema);
  device_.recent_norm.mul_(recent_ema).add_(global, 1 - recent_ema);
  const double b = static_cast<double>(stats.local_batch), B = static_cast<double>(stats.global_batch);
  auto local = per_tensor(stats.local_grad_sq_device, stats.local_grad_sq_per_tensor);
  const bool two_batch_sizes = local.defined() && b > 0 && B > b;
  if (two_batch_sizes) {  // McCandlish et al. 2018, appendix A, as in observe()
    auto G2 = (B * global - b * local) / (B - b);
    auto S = (local - global) / (1 / b - 1 / B);
    device_.signal.mul_(ema).add_(G2, 1 - ema);
    device_.noise.mul_(ema).add_(S, 1 - ema);
  }
  ++observed_;
  if (two_batch_sizes) ++noise_observed_;
}

void AGS::foreach_step(const StepStats& stats) {
  torch::NoGradGuard no_grad;
  upload_state();
  compute_factors_on_device(stats.global_batch);
  auto lists = with_gradients(params_);
  if (!lists.index.empty()) {
    auto factors = device_.factors;
    if (lists.index.size() < params_.size()) {  // some tensor has no gradient this step
      std::vector<int64_t> index(lists.index.begin(), lists.index.end());
      factors = device_.factors.index_select(0, torch::tensor(index, torch::kLong).to(device_.factors.device()));
    }
    // d = s g + wd w: the factor scales the gradient, not the decay.
    auto directions = kernels::scaled_each(lists.grads, factors);
    if (options_.weight_decay != 0) at::_foreach_add_(directions, lists.params, options_.weight_decay);
    std::vector<torch::Tensor> bufs;
    for (size_t i : lists.index) bufs.push_back(momentum_[i]);
    kernels::ForeachMomentum u;
    u.lr = lr_;
    u.momentum = options_.momentum;
    u.nesterov = options_.nesterov;
    kernels::foreach_momentum_update(lists.params, directions, bufs, u);
    for (size_t k = 0; k < lists.index.size(); ++k) momentum_[lists.index[k]] = bufs[k];
  }
  observe_on_device(stats, lists.index, lists.grads);
  host_stale_ = true;
}

}  // namespace tula::optim
