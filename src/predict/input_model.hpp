// How fast the input pipeline feeds a training step, and how much of its time
// the step waits for. The profile times `tula train`'s own loader alone (read,
// decode, augment, normalize, batch) and a few real steps fed by it:
//
//   t_in(b, w)  = w b s / (L(w) v)        a node's loaders prepare the w
//                                         workers' micro-batches of b samples
//   t_step      = max(t_in, t_c + rho t_in)
//
// s is one loader's seconds per sample, v the machine's relative speed, and
// L(w) = min(w, max(1, floor(cores / T))) the loaders that run in parallel:
// each loader decodes on T threads, so on a node of few cores a second worker
// adds no decoding capacity (more workers do not help an input-bound job on
// the same cores). rho is the share of t_in the step waits for: 1 where
// decoding and compute share the cores and take turns (CPU training), near 0
// where compute runs elsewhere and the prefetch queue hides the loader until
// it becomes the bottleneck (a GPU), above 1 where decode threads also slow
// compute down. It is fitted from the measured steps as
// rho = (t_step - t_c) / t_in with t_c the compute model's time at that batch,
// held within [0, kMaxExposed].
// Without samples (older profiles) the input costs nothing, as before.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/compute_model.hpp"
#include "predict/machine_spec.hpp"
#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

// The largest share of the loader's time a step is taken to wait for: 1 is
// taking turns on the same cores; above it, decode threads also slow compute.
inline constexpr double kMaxExposed = 2.0;

struct InputModel {
  bool measured = false;
  ParamBlock params;       // {"seconds_per_sample", "exposed"}: s and rho, independent
  int64_t threads = 1;     // T: threads of one loader
  int64_t cores = 1;       // of the profiled machine (its loaders' limit, see loaders())
  std::vector<std::string> notes;

  // L(w): loaders of `workers_per_node` workers that decode in parallel on `m`.
  // A GPU machine's host cores are not in its catalog entry: there every
  // worker's loader is taken to have cores of its own.
  double loaders(double workers_per_node, const MachineSpec& m) const;
  // t_in: seconds for a node's loaders to prepare one micro-batch of `batch`
  // for each of its workers, at seconds per sample `s`.
  double seconds(double batch, double workers_per_node, double s, const MachineSpec& m) const;
  // What a step waits for the input beyond compute: max(t_in, t_c + rho t_in) - t_c.
  static double wait(double compute_s, double input_s, double exposed) {
    const double step = std::max(input_s, compute_s + exposed * input_s);
    return step - compute_s;
  }
};

// Without loader samples: not measured, with a note. Step samples without
// loader samples are ignored; loader samples without steps take rho = 1
// (no overlap: conservative), with a note.
InputModel fit_input(const std::vector<LoaderSample>& loader, const std::vector<InputStepSample>& steps,
                     const ComputeModel& compute, int64_t cores);

nlohmann::json to_json(const InputModel& m);
InputModel input_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
