#include "predict/overlap_model.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "predict/error.hpp"

namespace tula::predict {

namespace {

struct Target {
  double tc, ta, ta_last, step;
};

double loss(const std::vector<Target>& ts, double p) {
  double s = 0;
  for (const auto& t : ts) {
    const double r = std::log(OverlapModel::step(t.tc, t.ta, t.ta_last, p) / t.step);
    s += r * r;
  }
  return s;
}

// Whether step times can tell p: p moves a sample's modelled step at most
// from tc + ta (p = 1) to max(tc, ta, tc + ta_last), a share of it no larger
// than min(tc, ta) / (tc + ta). Where that share is within the spread of the
// sample's own step times (largest minus smallest over their median) for
// every sample, the fit
// follows the compute model's error and the noise, not the overlap: a quick
// profile on one machine's loopback, where the allreduce is a few percent of
// a step, put p at 1 or at the bound from one profile to the next.
bool steps_tell_overlap(const std::vector<Target>& ts, const std::vector<double>& spreads) {
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& t = ts[i];
    const double span = (t.tc + t.ta - std::max({t.tc, t.ta, t.tc + t.ta_last})) / (t.tc + t.ta);
    if (span > spreads[i]) return true;
  }
  return false;
}

double spread(std::vector<double> v) {
  if (v.size() < 2) return 0;
  std::sort(v.begin(), v.end());
  return (v.back() - v.front()) / median(v);
}

}  // namespace

OverlapModel fit_overlap(const std::vector<OverlapSample>& samples, const ComputeModel& compute,
                         const AllreduceModel& allreduce, const ModelInfo& model, const BucketSettings& buckets) {
  OverlapModel m;
  if (samples.empty()) {
    m.notes.push_back("overlap: no overlap samples; p = 1 assumed (allreduce not hidden behind backward at all: "
                      "conservative, over-predicts multi-worker steps)");
    return m;
  }
  const BucketLayout layout = bucket_layout_of(model, buckets);
  const double nb = static_cast<double>(layout.count);
  const double last_bytes = static_cast<double>(layout.last_bytes);
  const double gradient_bytes = static_cast<double>(model.gradient_bytes);
  const auto modelled = [&](const OverlapSample& s) {
    Target t;
    t.tc = compute.forward_backward(static_cast<double>(s.batch_per_worker)) *
           compute.contention_factor(static_cast<double>(s.workers_per_node));
    t.ta = AllreduceModel::bucketed(static_cast<double>(s.workers), gradient_bytes, nb,
                                    allreduce.alpha(), allreduce.params.value(1));
    t.ta_last = AllreduceModel::ring(static_cast<double>(s.workers), last_bytes, allreduce.alpha(),
                                     allreduce.params.value(1));
    return t;
  };
  // Step times first, where they can tell p; else the fraction of the
  // allreduce the engine measured hidden behind backward, t_step = t_c + (1 -
  // h) t_a, which does not lean on the compute model's error.
  std::vector<Target> ts;
  std::vector<double> spreads;
  for (const auto& s : samples) {
    if (s.step_s.empty()) continue;
    auto t = modelled(s);
    t.step = median(s.step_s);
    ts.push_back(t);
    spreads.push_back(spread(s.step_s));
  }
  m.source = "step_s";
  if (ts.empty() || !steps_tell_overlap(ts, spreads)) {
    if (!ts.empty()) {
      m.notes.push_back("overlap: the allreduce is within the step times' own spread at every profiled size, so "
                        "they cannot tell p; fitted to the measured hidden fractions instead");
    }
    ts.clear();
    for (const auto& s : samples) {
      auto t = modelled(s);
      t.step = t.tc + (1 - s.hidden_fraction) * t.ta;
      ts.push_back(t);
    }
    m.source = "hidden_fraction";
  }

  // One parameter on a bounded interval: a log-spaced scan, then golden-section refinement.
  double best = 1, best_loss = loss(ts, 1);
  const int grid = 200;
  for (int i = 1; i <= grid; ++i) {
    const double p = std::exp(std::log(kMaxOverlapP) * i / grid);
    const double l = loss(ts, p);
    if (l < best_loss) best_loss = l, best = p;
  }
  const double step = std::exp(std::log(kMaxOverlapP) / grid);
  double lo = std::max(1.0, best / step), hi = std::min(kMaxOverlapP, best * step);
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int i = 0; i < 60; ++i) {
    const double a = hi - g * (hi - lo), b = lo + g * (hi - lo);
    if (loss(ts, a) < loss(ts, b)) {
      hi = b;
    } else {
      lo = a;
    }
  }
  m.p = (lo + hi) / 2;
  if (loss(ts, best) < loss(ts, m.p)) m.p = best;

  // Standard error from the Gauss-Newton curvature: se^2 = s^2 / sum J_i^2,
  // J_i = d log t_step,i / dp (numerical).
  const int n = static_cast<int>(ts.size());
  m.dof = n - 1;
  m.residual_sd = m.dof > 0 ? std::sqrt(loss(ts, m.p) / m.dof) : 0.0;
  double jj = 0;
  const double h = 1e-4 * m.p;
  for (const auto& t : ts) {
    const double d = (std::log(OverlapModel::step(t.tc, t.ta, t.ta_last, m.p + h)) -
                      std::log(OverlapModel::step(t.tc, t.ta, t.ta_last, m.p - h))) / (2 * h);
    jj += d * d;
  }
  m.p_se = (m.dof > 0 && jj > 0) ? m.residual_sd / std::sqrt(jj) : 0.0;
  std::string note;
  if (m.p <= 1.0001) {
    note = "overlap: measured steps are no faster than compute + communication; p = 1 (no overlap)";
  } else if (m.p >= kMaxOverlapP * 0.999) {
    note = fmt::format("overlap: measured steps are as fast as max(compute, communication); p held at the bound {:.3g}",
                       kMaxOverlapP);
  } else {
    note = fmt::format("overlap: p = {:.3g} +- {:.3g} from {} {} samples", m.p, m.p_se, n, m.source);
  }
  if (m.dof == 0) note += " (one sample: its uncertainty is not estimated)";
  m.notes.push_back(note);
  return m;
}

nlohmann::json to_json(const OverlapModel& m) {
  return {{"p", m.p}, {"p_se", m.p_se}, {"dof", m.dof}, {"source", m.source},
          {"residual_sd", m.residual_sd}, {"notes", m.notes}};
}

OverlapModel overlap_model_from_json(const nlohmann::json& j, const std::string& path) {
  OverlapModel m;
  try {
    m.p = j.at("p").get<double>();
    m.p_se = j.value("p_se", 0.0);
    m.dof = j.value("dof", 0);
    m.source = j.value("source", std::string("assumed"));
    m.residual_sd = j.value("residual_sd", 0.0);
    m.notes = j.value("notes", std::vector<std::string>{});
  } catch (const nlohmann::json::exception& e) {
    throw ProfileError(path + ": " + e.what());
  }
  if (!(m.p >= 1)) throw ProfileError(path + ".p: must be at least 1");
  return m;
}

}  // namespace tula::predict
