// How much of the gradient allreduce hides behind backward. Pollux (Qiao et
// al., OSDI 2021, sec. 3.2) models one step as a p-norm of compute and
// communication time,
//   t_step = (t_c^p + t_a^p)^(1/p),   p >= 1,
// which is t_c + t_a at p = 1 (no overlap) and max(t_c, t_a) as p -> infinity
// (perfect overlap). Whatever p, the last bucket's allreduce is not hidden:
// it holds the first layers' gradients, ready only when backward ends, so
//   t_step = max((t_c^p + t_a^p)^(1/p), t_c + t_last),
// all of the allreduce where one bucket holds the whole gradient (LeNet-5's
// 0.25 MB: round 47 measured 2.2-2.5 ms of its 2.3-2.7 ms allreduce waited
// for after backward on two nodes). p is fitted to measured steps (compute
// plus exposed communication), or to the engine's measured hidden fraction h
// through t_step = t_c + (1 - h) t_a when no step times were recorded.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "predict/allreduce_model.hpp"
#include "predict/compute_model.hpp"
#include "predict/profile.hpp"

namespace tula::predict {

inline constexpr double kMaxOverlapP = 16;  // (1 + 1)^(1/16) = 1.04: max() within 4%

struct OverlapModel {
  double p = 1;
  double p_se = 0;
  int dof = 0;
  std::string source = "assumed";  // "step_s", "hidden_fraction" or "assumed"
  double residual_sd = 0;          // of log(model / measured)
  std::vector<std::string> notes;

  static double combine(double tc, double ta, double p) {
    if (ta <= 0) return tc;
    if (tc <= 0) return ta;
    const double hi = tc > ta ? tc : ta;  // scaled so the powers cannot overflow
    return hi * std::pow(std::pow(tc / hi, p) + std::pow(ta / hi, p), 1.0 / p);
  }
  // One step's compute and communication: the p-norm, never less than the
  // compute and the last bucket's allreduce `ta_last` after it.
  static double step(double tc, double ta, double ta_last, double p) {
    const double norm = combine(tc, ta, p);
    return ta > 0 && norm < tc + ta_last ? tc + ta_last : norm;
  }
};

// The step from where each bucket's allreduce can start, without a fitted p:
// bucket k is ready at ready_fraction[k] x tc (measured on one worker, in
// launch order) and its allreduce takes bucket_seconds(k); the allreduces run
// one after another, each from the later of its readiness and the previous
// one's end. The step is compute or the last allreduce's end, whichever is
// later. A large early bucket (small_cnn's fully connected layers) hides
// behind the convs' backward; a lone bucket (LeNet-5) is all waited for.
template <typename BucketSeconds>
double pipelined_step(double tc, const std::vector<double>& ready_fraction, BucketSeconds&& bucket_seconds) {
  double end = 0;
  for (size_t k = 0; k < ready_fraction.size(); ++k) {
    end = std::max(end, ready_fraction[k] * tc) + bucket_seconds(k);
  }
  return std::max(tc, end);
}

// Without overlap samples p = 1 (no overlap: conservative), with a note.
OverlapModel fit_overlap(const std::vector<OverlapSample>& samples, const ComputeModel& compute,
                         const AllreduceModel& allreduce, const ModelInfo& model, const BucketSettings& buckets);

nlohmann::json to_json(const OverlapModel& m);
OverlapModel overlap_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
