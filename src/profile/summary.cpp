#include "profile/summary.hpp"

#include <fmt/format.h>

#include "common/text.hpp"

namespace tula::profile {
namespace {

using common::format_bytes;
using common::format_number;
using common::format_seconds;

// "12.3 ms ± 0.4 ms" in the unit `format` gives.
template <typename F>
std::string pm(const predict::ParamBlock& p, int i, F&& format) {
  return format(p.value(i)) + " ± " + format(p.se(i));
}

}  // namespace

std::string describe_fit(const predict::FittedModels& m) {
  std::string out;
  const auto& c = m.compute;
  const auto per_sample = [](double s) { return format_seconds(s) + "/sample"; };
  const auto number = [](double v) { return format_number(v); };
  if (c.shape == predict::ComputeShape::Linear) {
    out += fmt::format("  compute      t_c(b) = a + c b: a = {}, c = {}", pm(c.params, 0, format_seconds),
                       pm(c.params, 1, per_sample));
  } else {
    out += fmt::format("  compute      t_c(b) = t0 + c max(0, b - {}): t0 = {}, c = {}", format_number(c.b_sat),
                       pm(c.params, 0, format_seconds), pm(c.params, 1, per_sample));
  }
  out += fmt::format(" ({} points, leave-one-out error {}%)\n", c.params.points, format_number(100 * c.loo_linear, 2));
  out += fmt::format("  optimizer    t_opt = {} per step\n", pm(c.optimizer, 0, format_seconds));
  if (!c.contention_measured) {
    out += "  contention   gamma = 0 (not measured: assumed)\n";
  } else {
    out += "  contention   t(k) = t(1) (1 + gamma_k (k - 1)):";
    for (int j = 0; j < c.contention.size(); ++j) {
      out += fmt::format("{} {} = {}", j ? "," : "", c.contention.names[static_cast<size_t>(j)],
                         pm(c.contention, j, number));
    }
    out += " (linear in k between measured counts)\n";
  }
  const auto& a = m.allreduce;
  out += fmt::format("  allreduce    alpha = {} per ring step, bandwidth {}/s (1/BW = {} ± {} ns/byte)\n",
                     pm(a.params, 0, format_seconds), format_bytes(a.bandwidth()),
                     format_number(a.params.value(1) * 1e9), format_number(a.params.se(1) * 1e9));
  out += fmt::format("  overlap      p = {} ± {} (from {}; 1 = none, 16 = full)\n", format_number(m.overlap.p),
                     format_number(m.overlap.p_se), m.overlap.source);
  out += fmt::format("  memory       M(b) = M_static + m_act b: M_static = {}, m_act = {}/sample\n",
                     pm(m.memory.params, 0, format_bytes),
                     pm(m.memory.params, 1, [](double v) { return format_bytes(v); }));
  const auto& e = m.evaluation;
  if (e.source == predict::EvaluationSource::FromCompute) {
    out += "  evaluation   taken as a third of forward+backward (not measured)\n";
  } else {
    out += fmt::format("  evaluation   t_eval = e0 + e1 n: e0 = {}, e1 = {}\n", pm(e.params, 0, format_seconds),
                       pm(e.params, 1, per_sample));
  }
  if (m.input.measured) {
    const double s = m.input.params.value(0);
    out += fmt::format("  input        t_in = b s: s = {} (one loader on {} {}, {} samples/s); share of it a step "
                       "waits for rho = {}\n",
                       pm(m.input.params, 0, per_sample), m.input.threads,
                       m.input.threads == 1 ? "thread" : "threads", format_number(1 / s, 4),
                       pm(m.input.params, 1, number));
  } else {
    out += "  input        not timed: reading and decoding taken to cost nothing\n";
  }
  if (m.noise) {
    out += fmt::format("  noise scale  B_noise = {} ± {} ({} steps)\n", format_number(m.noise->b_noise),
                       format_number(m.noise->se), m.noise->steps);
  }
  if (m.statistical) {
    out += fmt::format("  statistical  S(B) = S_min (1 + B_noise / B): S_min = {} steps, B_noise = {} (to {}% "
                       "accuracy)\n",
                       pm(m.statistical->params, 0, number), pm(m.statistical->params, 1, number),
                       format_number(100 * m.statistical->target_accuracy));
  }
  return out;
}

}  // namespace tula::profile
