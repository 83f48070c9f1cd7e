// The prediction API: from a profile's fitted models to the time, memory and
// cost of any configuration (machine, nodes, workers per node, per-worker
// batch, accumulation steps), each with an interval. This is what `tula
// predict` and the planner call:
//
//   auto profile = tula::predict::load_profile("p.json");
//   tula::predict::Predictor predictor = tula::predict::Predictor::from_profile(profile);
//   auto machine = tula::predict::profiled_machine(profile);   // or a catalog entry
//   auto pred = predictor.predict({.nodes = 1, .workers_per_node = 2, .batch_per_worker = 64}, machine);
//   std::cout << tula::predict::format_prediction(pred);      // or to_json(pred); report.hpp
//
// Intervals propagate the fits' parameter uncertainty by simulation: each
// model's parameters are drawn (options.draws times) from their fitted
// multivariate Student t (see stats.hpp), the whole prediction is recomputed
// per draw, and the interval is the central `level` quantile range of the
// draws. The same draws serve every configuration (common random numbers), so
// intervals of different configurations are comparable. They are confidence
// intervals of the predicted mean; a single run also varies run to run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "predict/fit.hpp"
#include "common/layout.hpp"
#include "predict/machine_spec.hpp"
#include "predict/profile.hpp"

namespace tula::predict {

// The profiled machine as a MachineSpec (price 0; workers per node up to its cores).
MachineSpec profiled_machine(const Profile& profile);

// A configuration the predictor times: the job's layout (common/layout.hpp).
using Config = common::Layout;

struct Interval {
  double estimate = 0;  // at the fitted parameters
  double lo = 0, hi = 0;
};

// Every quantity of one configuration at one parameter set.
struct Breakdown {
  double compute_s = 0;       // forward+backward of the micro-batch that carries the allreduce (with contention:
                              // the node's workers', and across nodes the allreduce's work on their cores)
  double allreduce_s = 0;     // all buckets' ring allreduce, unhidden
  double exposed_comm_s = 0;  // what the overlap leaves after backward
  double optimizer_s = 0;
  double input_s = 0;         // the node's loaders preparing one micro-batch per worker
  double input_wait_s = 0;    // what a micro-batch step waits for it beyond compute
  double iteration_s = 0;     // one optimizer step
  double iterations_per_epoch = 0;
  double eval_s = 0;          // one pass over the test set
  double final_test_s = 0;    // the one reading at the end (Profile::data.final_test_samples; 0: none)
  double epoch_s = 0;         // iterations + the epoch's evaluations
  double steps = 0;           // to the target (or for the fixed epochs)
  double epochs = 0;
  double time_s = 0;          // to the target, evaluations and the final test included
  double cost = 0;            // time x nodes x price
  double memory_bytes = 0;    // per worker
};

// One step's parts, predicted (a part of Prediction).
struct StepIntervals {
  Interval compute_s, allreduce_s, exposed_comm_s, input_wait_s, iteration_s;
};

struct Prediction {
  MachineSpec machine;
  Config config;
  int64_t workers = 0;
  int64_t global_batch = 0;
  int64_t max_batch_per_worker = 0;  // memory limit on this machine
  bool to_target = false;            // time is to the target accuracy (else for `epochs`)
  double target_accuracy = 0;
  double level = 0.95;
  StepIntervals per_step;
  Interval epoch_s, eval_s, final_test_s, memory_bytes, steps, epochs, time_s, cost;
  std::vector<std::string> notes;
};

struct PredictorOptions {
  int draws = 400;                // parameter draws for intervals
  double level = 0.95;            // central interval probability
  uint64_t seed = 20260318;       // draws are reproducible
  double epochs = 0;              // > 0: predict time for this many epochs even with a statistical model
  // Passes over the test (or validation) samples per epoch: `tula train`
  // reads its test split once an epoch, `tula tune` its validation split every
  // --eval-every-epochs; 0: none.
  double evaluations_per_epoch = 1;
  double memory_level = 0.975;    // one-sided bound used for "fits in memory"
  // Scale the profiled compute times so that the pilot run's configuration
  // predicts its measured seconds per step (when the profile has them): the
  // pilot is the real job (data pipeline, long run), the profile a short
  // synthetic trial.
  bool calibrate_to_pilot = true;
  // How the statistical model grows the gradient-noise estimate over the job
  // (noise_growth.hpp): none here; `tula tune` and `--noise-growth` ask for
  // the measured law.
  NoiseGrowth noise_growth{};
  // Below this global batch the statistical model needs no fewer epochs than
  // at it (statistical_model.hpp): `tula tune` gives its rate's reference
  // batch, `--epochs-floor-batch` any; 0: the law alone.
  double epochs_floor_batch = 0;
};

class Predictor {
 public:
  Predictor(FittedModels models, const Profile& profile, PredictorOptions options = {});
  // Fits the profile's raw samples (fitting is milliseconds and keeps old
  // profiles current with the fitting code); throws FitError.
  static Predictor from_profile(const Profile& profile, PredictorOptions options = {});

  const FittedModels& models() const { return models_; }
  const PredictorOptions& options() const { return options_; }
  // True when times are to the target accuracy, false when for fixed epochs.
  bool to_target() const { return models_.statistical.has_value() && options_.epochs <= 0; }
  double fixed_epochs() const;  // the epochs used when !to_target()
  // Factor on compute and optimizer times from the pilot's step time (1: none).
  double compute_scale() const { return compute_scale_; }
  // Factor on the allreduce time of configurations whose ring crosses nodes
  // as a pilot's did (1: none; within a node likewise).
  double allreduce_scale_across_nodes() const { return across_nodes_.allreduce_scale; }
  // Factor on evaluation times from a pilot's measured evaluation (1: none).
  double eval_scale() const { return eval_scale_; }
  int64_t train_samples() const { return train_samples_; }
  int64_t test_samples() const { return test_samples_; }
  int64_t gradient_bytes() const { return gradient_bytes_; }

  // Memory one worker may use: its device, or a share of the node's when CPU
  // workers outnumber devices.
  double memory_per_worker(const MachineSpec& m, int64_t workers_per_node) const;
  // Largest per-worker micro-batch that fits (0: none does).
  int64_t max_batch_per_worker(const MachineSpec& m, int64_t workers_per_node) const;
  // The stated fallback for a batch too large to fit: split it into
  // accumulation steps. Throws InfeasibleError when not even 1 fits.
  AccumulationPlan fit_to_memory(int64_t batch_per_worker, const MachineSpec& m, int64_t workers_per_node) const;

  // At the fitted parameters, no checks, no allocation: the planner's inner loop.
  Breakdown point(const Config& c, const MachineSpec& m) const;
  // With intervals and notes. Throws InfeasibleError for a configuration the
  // machine cannot run (too many workers per node, a micro-batch that does
  // not fit) and std::invalid_argument for a malformed one.
  Prediction predict(const Config& c, const MachineSpec& m) const;
  // Intervals of the time and cost only (the planner's front): {time, cost}.
  std::pair<Interval, Interval> time_cost_interval(const Config& c, const MachineSpec& m) const;

  // Assumptions behind every prediction, then each model's notes.
  std::vector<std::string> assumptions() const;

 private:
  struct Params {
    double p0 = 0, c = 0, t_opt = 0;
    std::vector<double> gamma;  // one per measured worker count (ComputeModel::contention)
    double alpha = 0, inv_bw = 0, p = 1;
    double m_static = 0, m_act = 0;
    double e0 = 0, e1 = 0;
    double in_s = 0, in_exposed = 1;  // input: seconds per sample, share waited for
    double s_min = 0, b_noise = 0;
  };
  Breakdown evaluate(const Params& q, const Config& c, const MachineSpec& m) const;
  // The step's communication (sets r's allreduce_s, compute_s and
  // exposed_comm_s); returns when the last micro-batch's backward and the
  // allreduce it waits for end.
  double communication(const Params& q, const Config& c, const MachineSpec& m, double forward_backward,
                       Breakdown& r) const;
  // One evaluation pass over `samples`, sharded over the workers.
  double evaluation_pass_s(const Params& q, const Config& c, const MachineSpec& m, double forward_backward,
                           double slow, int64_t samples) const;
  void draw_parameters();
  // Where a configuration's allreduce runs: nowhere (one worker), within one
  // node, or across nodes. A pilot's communication calibrates its own kind
  // only: a ring over a network is not one over a node's memory.
  struct RingCalibration {
    double allreduce_scale = 1;  // on the modelled allreduce: the pilot's measured time in flight
    double overlap_p = 0;        // > 0: the overlap's p that gives the pilot's measured exposure
  };
  const RingCalibration& ring_calibration(const Config& c) const;
  // The profile's bucket readiness at the profiled batch nearest (in ratio)
  // to `batch_per_worker`; null where the profile did not record it.
  const std::vector<double>* bucket_ready_fraction(double batch_per_worker) const;
  RingCalibration& ring_calibration(const Config& c);
  void calibrate_to_pilots(const Profile& profile);
  void calibrate_communication(const PilotRun& pilot, const Config& c, const MachineSpec& machine,
                               std::vector<double>& scales, std::vector<double>& ps);
  void calibrate_evaluation(const Profile& profile);

  FittedModels models_;
  PredictorOptions options_;
  int64_t train_samples_ = 0, test_samples_ = 0, final_test_samples_ = 0, gradient_bytes_ = 0;
  double buckets_ = 1;
  int64_t last_bucket_bytes_ = 0;
  std::vector<double> bucket_bytes_;  // the recorded buckets, in launch order (empty: reckoned)
  struct BucketReadiness {
    double batch_per_worker;
    std::vector<double> fraction;  // ComputeSample::bucket_ready_fraction
  };
  std::vector<BucketReadiness> bucket_readiness_;  // one per profiled batch that recorded it
  double compute_scale_ = 1;
  RingCalibration within_node_, across_nodes_;
  double eval_scale_ = 1;
  std::vector<std::string> calibration_notes_;
  Params point_;
  std::vector<Params> draws_;
};

}  // namespace tula::predict
