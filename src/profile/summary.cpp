#include "profile/summary.hpp"

#include <sstream>

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
  std::ostringstream out;
  const auto& c = m.compute;
  const auto per_sample = [](double s) { return format_seconds(s) + "/sample"; };
  if (c.shape == predict::ComputeShape::Linear) {
    out << "  compute      t_c(b) = a + c b: a = " << pm(c.params, 0, format_seconds)
        << ", c = " << pm(c.params, 1, per_sample);
  } else {
    out << "  compute      t_c(b) = t0 + c max(0, b - " << format_number(c.b_sat) << "): t0 = "
        << pm(c.params, 0, format_seconds) << ", c = " << pm(c.params, 1, per_sample);
  }
  out << " (" << c.params.points << " points, leave-one-out error " << format_number(100 * c.loo_linear, 2) << "%)\n";
  out << "  optimizer    t_opt = " << pm(c.optimizer, 0, format_seconds) << " per step\n";
  if (!c.contention_measured) {
    out << "  contention   gamma = 0 (not measured: assumed)\n";
  } else {
    out << "  contention   t(k) = t(1) (1 + gamma_k (k - 1)):";
    for (int j = 0; j < c.contention.size(); ++j) {
      out << (j ? "," : "") << " " << c.contention.names[static_cast<size_t>(j)] << " = "
          << pm(c.contention, j, [](double v) { return format_number(v); });
    }
    out << " (linear in k between measured counts)\n";
  }
  const auto& a = m.allreduce;
  out << "  allreduce    alpha = " << pm(a.params, 0, format_seconds) << " per ring step, bandwidth "
      << format_bytes(a.bandwidth()) << "/s (1/BW = " << format_number(a.params.value(1) * 1e9) << " ± "
      << format_number(a.params.se(1) * 1e9) << " ns/byte)\n";
  out << "  overlap      p = " << format_number(m.overlap.p) << " ± " << format_number(m.overlap.p_se) << " (from "
      << m.overlap.source << "; 1 = none, 16 = full)\n";
  out << "  memory       M(b) = M_static + m_act b: M_static = " << pm(m.memory.params, 0, format_bytes)
      << ", m_act = " << pm(m.memory.params, 1, [](double v) { return format_bytes(v); }) << "/sample\n";
  const auto& e = m.evaluation;
  if (e.source == predict::EvaluationSource::FromCompute) {
    out << "  evaluation   taken as a third of forward+backward (not measured)\n";
  } else {
    out << "  evaluation   t_eval = e0 + e1 n: e0 = " << pm(e.params, 0, format_seconds)
        << ", e1 = " << pm(e.params, 1, per_sample) << "\n";
  }
  if (m.input.measured) {
    const double s = m.input.params.value(0);
    out << "  input        t_in = b s: s = " << pm(m.input.params, 0, per_sample) << " (one loader on "
        << m.input.threads << (m.input.threads == 1 ? " thread, " : " threads, ") << format_number(1 / s, 4)
        << " samples/s); share of it a step waits for rho = " << pm(m.input.params, 1, [](double v) {
             return format_number(v);
           }) << "\n";
  } else {
    out << "  input        not timed: reading and decoding taken to cost nothing\n";
  }
  if (m.noise) {
    out << "  noise scale  B_noise = " << format_number(m.noise->b_noise) << " ± " << format_number(m.noise->se)
        << " (" << m.noise->steps << " steps)\n";
  }
  if (m.statistical) {
    out << "  statistical  S(B) = S_min (1 + B_noise / B): S_min = "
        << pm(m.statistical->params, 0, [](double v) { return format_number(v); }) << " steps, B_noise = "
        << pm(m.statistical->params, 1, [](double v) { return format_number(v); }) << " (to "
        << format_number(100 * m.statistical->target_accuracy) << "% accuracy)\n";
  }
  return out.str();
}

}  // namespace tula::profile
