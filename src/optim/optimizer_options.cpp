#include "optim/optimizer_options.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace tula::optim {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

void validate_adam_moments(const AdamMoments& m, const std::string& beta2_name, const std::string& eps_name) {
  require(m.beta2 >= 0 && m.beta2 < 1, beta2_name + " must be in [0, 1)");
  require(m.eps > 0, eps_name + " must be > 0");
}

void validate_ags(const AgsOptions& o) {
  if (o.bounded) {
    require(o.s_min > 0,
            fmt::format("--ags-min must be > 0 (got {:f}): the convergence bound needs factors bounded away from 0",
                        o.s_min));
    require(o.s_max >= 0, "--ags-max must be >= 0 (0: global batch / reference batch)");
    require(o.s_max == 0 || o.s_min <= o.s_max,
            fmt::format("--ags-min {:f} is larger than --ags-max {:f}", o.s_min, o.s_max));
  }
  require(o.trust_exponent >= 0 && o.trust_exponent <= 1, "--ags-trust-exponent must be in [0, 1]");
  require(o.direction == "momentum" || o.direction == "adam",
          "--ags-direction must be momentum or adam (got '" + o.direction + "')");
  validate_adam_moments(o.adam, "AGS adam direction's beta2", "AGS adam direction's eps");
  require(o.ema > 0 && o.ema < 1 && o.recent_ema >= 0 && o.recent_ema < 1,
          "AGS smoothing factors must be in [0, 1)");
}

}  // namespace

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = {"sgd", "lars", "lamb", "ags"};
  return names;
}

std::string optimizer_name_list() {
  std::string list;
  for (const auto& n : optimizer_names()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

void OptimizerOptions::validate() const {
  const auto& names = optimizer_names();
  require(std::find(names.begin(), names.end(), name) != names.end(),
          "unknown --optimizer '" + name + "' (" + optimizer_name_list() + ")");
  require(lr > 0, fmt::format("--lr must be positive (got {:f})", lr));
  require(momentum >= 0 && momentum < 1,
          fmt::format("--momentum must be in [0, 1) (got {:f}){}", momentum,
                      name == "lamb" ? "; for lamb it is the first-moment decay beta1" : ""));
  require(weight_decay >= 0, "--weight-decay must be >= 0");
  require(!nesterov || name != "lamb",
          "--nesterov does not apply to lamb: its first moment is an average of gradients (beta1 = --momentum), "
          "not a momentum buffer to look ahead along");
  require(!nesterov || momentum > 0, "--nesterov needs --momentum > 0");
  require(!nesterov || name != "ags" || ags.direction == "momentum",
          "--nesterov does not apply to --ags-direction adam (its first moment is an average, as in lamb)");
  require(lars.trust_coefficient > 0, "--lars-trust must be > 0");
  require(lars.eps >= 0, "LARS eps must be >= 0");
  validate_adam_moments(lamb, "--lamb-beta2", "--lamb-eps");
  validate_ags(ags);
  require(update == "auto" || update == "foreach" || update == "per-tensor",
          "--optimizer-update must be auto, foreach or per-tensor (got '" + update + "')");
  require(update != "foreach" || name != "ags" || ags.direction == "momentum",
          "--optimizer-update foreach does not cover --ags-direction adam yet (use per-tensor or auto on the CPU)");
}

}  // namespace tula::optim
