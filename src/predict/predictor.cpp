#include "predict/predictor.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include <fmt/format.h>

#include "common/text.hpp"
#include "predict/error.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

using common::format_bytes;
using common::format_number;
using common::format_seconds;

MachineSpec profiled_machine(const Profile& p) {
  MachineSpec m;
  m.name = p.hardware.hostname.empty() ? "profiled" : p.hardware.hostname;
  m.device_kind = p.hardware.device.kind;
  // A CPU is one device its workers share, up to its cores; GPUs run one
  // worker each, as many as the profiled node has.
  const bool cpu = p.hardware.device.kind == "cpu";
  m.devices_per_node = cpu ? 1 : std::max<int64_t>(1, p.hardware.device.count);
  m.max_workers_per_node = cpu ? p.hardware.cores : m.devices_per_node;
  if (!cpu) m.accelerator_model = p.hardware.device.name;
  // More workers than cores time-share them: predictable only where the
  // profile measured steps at that many workers per node (its contention
  // samples), so the measured counts extend the limit and nothing else does.
  for (const auto& s : p.compute) m.max_workers_per_node = std::max(m.max_workers_per_node, s.workers_per_node);
  m.device_memory_bytes = p.hardware.device.memory_bytes;
  return m;
}

Predictor::Predictor(FittedModels models, const Profile& profile, PredictorOptions options)
    : models_(std::move(models)), options_(options) {
  if (options_.draws < 0) throw std::invalid_argument("draws must be non-negative");
  if (!(options_.level > 0 && options_.level < 1)) throw std::invalid_argument("interval level must be in (0, 1)");
  train_samples_ = profile.data.train_samples;
  test_samples_ = profile.data.test_samples;
  final_test_samples_ = profile.data.final_test_samples;
  gradient_bytes_ = profile.model.gradient_bytes;
  const BucketLayout layout = bucket_layout_of(profile.model, profile.buckets);
  buckets_ = static_cast<double>(layout.count);
  last_bucket_bytes_ = layout.last_bytes;
  for (const int64_t bytes : profile.model.bucket_bytes) bucket_bytes_.push_back(static_cast<double>(bytes));
  for (const auto& s : profile.compute) {
    if (s.workers_per_node == 1 && !s.bucket_ready_fraction.empty() &&
        s.bucket_ready_fraction.size() == bucket_bytes_.size()) {
      bucket_readiness_.push_back({static_cast<double>(s.batch_per_worker), s.bucket_ready_fraction});
    }
  }

  const auto& cm = models_.compute;
  point_.p0 = cm.params.value(0);
  point_.c = cm.params.value(1);
  point_.t_opt = cm.optimizer.value(0);
  point_.gamma.assign(cm.contention.value.data(), cm.contention.value.data() + cm.contention.value.size());
  point_.alpha = models_.allreduce.params.value(0);
  point_.inv_bw = models_.allreduce.params.value(1);
  point_.p = models_.overlap.p;
  point_.m_static = models_.memory.params.value(0);
  point_.m_act = models_.memory.params.value(1);
  point_.e0 = models_.evaluation.params.value(0);
  point_.e1 = models_.evaluation.params.value(1);
  point_.in_s = models_.input.params.value(0);
  point_.in_exposed = models_.input.params.value(1);
  if (models_.statistical) {
    point_.s_min = models_.statistical->s_min();
    point_.b_noise = models_.statistical->b_noise();
  }
  draw_parameters();
  if (options_.calibrate_to_pilot) {
    calibrate_to_pilots(profile);
    calibrate_evaluation(profile);
  }
}

// One factor on the evaluation time so that a pilot's layout predicts the
// evaluation it measured. The profile times evaluation on a few hundred
// samples on the whole machine, while the job evaluates thousands on a node's
// share of it (docs/notebook/round-05.md, "The oracle, round 5", measures the gap);
// a job evaluating every quarter epoch spends a quarter to a third of its
// training time there.
// Several pilots: the median factor, as for the compute.
void Predictor::calibrate_evaluation(const Profile& profile) {
  const MachineSpec profiled = profiled_machine(profile);
  std::vector<double> scales;
  for (const auto& pilot : profile.pilots) {
    if (pilot.eval_s <= 0 || pilot.workers < 1) continue;
    const MachineSpec& machine = pilot.machine ? *pilot.machine : profiled;
    Config c;
    c.nodes = std::max<int64_t>(1, pilot.nodes);
    c.workers_per_node = std::max<int64_t>(1, pilot.workers / c.nodes);
    c.batch_per_worker = std::max<int64_t>(1, pilot.batch_per_worker);
    c.accumulation_steps = pilot.accumulation_steps;
    const double predicted = evaluate(point_, c, machine).eval_s;
    if (!(predicted > 0)) continue;
    const double scale = pilot.eval_s / predicted;
    if (scale < 1.0 / 8 || scale > 8) {
      calibration_notes_.push_back(fmt::format("evaluation: a pilot measured {} per evaluation, more than 8x off the "
                                               "profile's {}; not calibrated to it",
                                               format_seconds(pilot.eval_s), format_seconds(predicted)));
      continue;
    }
    scales.push_back(scale);
    calibration_notes_.push_back(fmt::format("evaluation: profiled times x {} so that a pilot's layout ({} workers) "
                                             "predicts its measured {} per evaluation",
                                             format_number(scale), pilot.workers, format_seconds(pilot.eval_s)));
  }
  if (!scales.empty()) eval_scale_ = median(scales);
}

namespace {

// The root of an increasing f on [lo, hi] by bisection on the log scale.
template <class F>
double bisect_increasing(F f, double target, double lo, double hi) {
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);
    (f(mid) < target ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

// The median of factors, the middle two's geometric mean for an even count
// (factors multiply; predict::median, for times, takes their arithmetic mean).
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : std::sqrt(v[n / 2 - 1] * v[n / 2]);
}

Config config_of(const PilotRun& pilot) {
  Config c;
  c.nodes = std::max<int64_t>(1, pilot.nodes);
  c.workers_per_node = pilot.workers / c.nodes;
  c.batch_per_worker = pilot.batch_per_worker;
  c.accumulation_steps = pilot.accumulation_steps;
  return c;
}

}  // namespace

const Predictor::RingCalibration& Predictor::ring_calibration(const Config& c) const {
  static const RingCalibration none;
  if (c.workers() < 2) return none;
  return c.nodes > 1 ? across_nodes_ : within_node_;
}

Predictor::RingCalibration& Predictor::ring_calibration(const Config& c) {
  return c.nodes > 1 ? across_nodes_ : within_node_;
}

const std::vector<double>* Predictor::bucket_ready_fraction(double batch_per_worker) const {
  const BucketReadiness* nearest = nullptr;
  double distance = 0;
  for (const auto& r : bucket_readiness_) {
    // The larger of the two ratios orders as |log| does, without a log on the planner's inner loop.
    const double d = std::max(r.batch_per_worker / batch_per_worker, batch_per_worker / r.batch_per_worker);
    if (!nearest || d < distance) nearest = &r, distance = d;
  }
  return nearest ? &nearest->fraction : nullptr;
}

// One factor on the compute and optimizer times, found by bisection so that
// the pilot's configuration on the machine it ran on predicts the pilot's
// measured step time. Where the pilot's metrics split its step, the factor
// answers for the step without the allreduce waited for after backward, and
// the communication is calibrated on its own (calibrate_communication): one
// factor over the whole step put a two-node pilot's exposed allreduce, which
// the overlap model hid, into every configuration's compute, one node's
// included (docs/notebook/round-47.md, "The oracle, round 47"). Several timed
// pilots: the median factor. A factor outside [1/8, 8] means the pilot ran
// somewhere else than it says and is not used.
void Predictor::calibrate_to_pilots(const Profile& profile) {
  const MachineSpec profiled = profiled_machine(profile);
  std::vector<double> scales;
  struct Split {
    const PilotRun* pilot;
    const MachineSpec* machine;
    Config config;
  };
  std::vector<Split> split;
  for (const auto& pilot : profile.pilots) {
    if (pilot.seconds_per_step <= 0) continue;
    const MachineSpec& machine = pilot.machine ? *pilot.machine : profiled;
    const Config c = config_of(pilot);
    const std::string where =
        fmt::format("pilot at B = {} ({} x {}{})", pilot.global_batch, pilot.workers, pilot.batch_per_worker,
                    pilot.accumulation_steps > 1 ? fmt::format(" x {}", pilot.accumulation_steps) : "");
    if (c.workers_per_node > machine.max_workers_per_node) {
      calibration_notes_.push_back("compute: " + where + " has more workers than the profile measured; not calibrated to it");
      continue;
    }
    // A step of several workers always has some allreduce in flight: none
    // recorded means the engine did not time it, not that it was free.
    const bool splits = c.workers() > 1 && pilot.comm_exposed_s >= 0 && pilot.comm_busy_s > 0;
    const double target = splits ? pilot.seconds_per_step - pilot.comm_exposed_s : pilot.seconds_per_step;
    auto predicted_at = [&](double scale) {
      compute_scale_ = scale;
      const Breakdown b = evaluate(point_, c, machine);
      return splits ? b.iteration_s - b.exposed_comm_s : b.iteration_s;
    };
    const double lo = 1.0 / 8, hi = 8;
    if (!(target > 0) || predicted_at(lo) > target || predicted_at(hi) < target) {
      compute_scale_ = 1;
      calibration_notes_.push_back("compute: " + where + " measured " + format_seconds(pilot.seconds_per_step) +
                                   " per step, more than 8x off the profile; not calibrated to it");
      continue;
    }
    scales.push_back(bisect_increasing(predicted_at, target, lo, hi));
    compute_scale_ = 1;
    calibration_notes_.push_back(
        "compute: profiled times x " + format_number(scales.back()) + " so that the " + where + " predicts its measured " +
        (splits ? format_seconds(target) + " per step besides the " + format_seconds(pilot.comm_exposed_s) +
                      " of allreduce waited for after backward"
                : format_seconds(pilot.seconds_per_step) + " per step"));
    if (splits) split.push_back({&pilot, &machine, c});
  }
  if (scales.empty()) return;
  compute_scale_ = median_of(scales);

  // The communication at the compute found: per kind of ring, the medians.
  std::vector<double> within_scales, within_ps, across_scales, across_ps;
  for (const auto& [pilot, machine, c] : split) {
    const bool across = c.nodes > 1;
    calibrate_communication(*pilot, c, *machine, across ? across_scales : within_scales, across ? across_ps : within_ps);
  }
  if (!within_scales.empty()) within_node_ = {median_of(within_scales), median_of(within_ps)};
  if (!across_scales.empty()) across_nodes_ = {median_of(across_scales), median_of(across_ps)};
}

// A split pilot's allreduce: a factor on the modelled allreduce so that it
// takes the measured time in flight (or the measured wait, where the wait
// was longer: a node waiting for a slower one waits past its own transfer),
// then the overlap's p that leaves the measured wait after backward (p = 1:
// none hidden, as where one bucket holds the whole gradient and starts when
// backward ends). Factors outside [1/8, 8] are clamped, with a note.
void Predictor::calibrate_communication(const PilotRun& pilot, const Config& c, const MachineSpec& machine,
                                        std::vector<double>& scales, std::vector<double>& ps) {
  RingCalibration& ring = ring_calibration(c);
  ring = {};
  const Breakdown modelled = evaluate(point_, c, machine);
  if (!(modelled.allreduce_s > 0)) return;
  const double in_flight = std::max(pilot.comm_busy_s, pilot.comm_exposed_s);
  const double scale = std::clamp(in_flight / modelled.allreduce_s, 1.0 / 8, 8.0);
  ring.allreduce_scale = scale;
  if (bucket_ready_fraction(static_cast<double>(c.batch_per_worker))) {
    // The wait after backward follows from the buckets' measured readiness;
    // no p to find (0: none).
    const double modelled_wait = evaluate(point_, c, machine).exposed_comm_s;
    ring = {};
    scales.push_back(scale);
    ps.push_back(0);
    calibration_notes_.push_back(fmt::format(
        "communication {}: the modelled allreduce x {}{} so that the pilot's layout takes its measured {} in flight "
        "(it waited {} after backward; the profile's bucket readiness models {})",
        c.nodes > 1 ? "across nodes" : "within a node", format_number(scale),
        scale == 1.0 / 8 || scale == 8.0 ? " (clamped)" : "", format_seconds(in_flight),
        format_seconds(pilot.comm_exposed_s), format_seconds(modelled_wait)));
    return;
  }
  auto exposed_at = [&](double p) {
    ring.overlap_p = p;
    return evaluate(point_, c, machine).exposed_comm_s;
  };
  double p = 1;
  if (exposed_at(1) > pilot.comm_exposed_s) {
    p = exposed_at(kMaxOverlapP) >= pilot.comm_exposed_s
            ? kMaxOverlapP
            // exposure falls as p grows: bisect its negative
            : bisect_increasing([&](double q) { return -exposed_at(q); }, -pilot.comm_exposed_s, 1, kMaxOverlapP);
  }
  ring = {};
  scales.push_back(scale);
  ps.push_back(p);
  calibration_notes_.push_back(fmt::format(
      "communication {}: the modelled allreduce x {}{} so that the pilot's layout takes its measured {} in flight, "
      "and overlap p = {} so that {} of it is waited for after backward, as measured",
      c.nodes > 1 ? "across nodes" : "within a node", format_number(scale),
      scale == 1.0 / 8 || scale == 8.0 ? " (clamped)" : "", format_seconds(in_flight), format_number(p),
      format_seconds(pilot.comm_exposed_s)));
}

Predictor Predictor::from_profile(const Profile& profile, PredictorOptions options) {
  return Predictor(fit_profile(profile, {}, options.noise_growth, options.epochs_floor_batch), profile, options);
}

// Each model's parameters are drawn from its own fit; the fits use disjoint
// samples, so the blocks are independent. Draws are clamped to the physical
// range (times and slopes non-negative, p >= 1), which only trims tails.
void Predictor::draw_parameters() {
  std::mt19937_64 rng(options_.seed);
  const int k = options_.draws;
  const auto compute = predict::draw_parameters(models_.compute.params, k, rng);
  const auto opt = predict::draw_parameters(models_.compute.optimizer, k, rng);
  const auto gamma = predict::draw_parameters(models_.compute.contention, k, rng);
  const auto ar = predict::draw_parameters(models_.allreduce.params, k, rng);
  const auto mem = predict::draw_parameters(models_.memory.params, k, rng);
  const auto ev = predict::draw_parameters(models_.evaluation.params, k, rng);
  const auto in = predict::draw_parameters(models_.input.params, k, rng);
  Eigen::MatrixXd stat;
  if (models_.statistical) stat = predict::draw_parameters(models_.statistical->params, k, rng);
  const auto& ov = models_.overlap;
  std::student_t_distribution<double> t(ov.dof > 0 ? ov.dof : 1);
  draws_.resize(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) {
    Params q = point_;
    q.p0 = std::max(0.0, compute(i, 0));
    q.c = std::max(0.0, compute(i, 1));
    q.t_opt = std::max(0.0, opt(i, 0));
    for (size_t j = 0; j < q.gamma.size(); ++j) q.gamma[j] = std::max(0.0, gamma(i, static_cast<Eigen::Index>(j)));
    q.alpha = std::max(0.0, ar(i, 0));
    q.inv_bw = std::max(1e-3 * point_.inv_bw, ar(i, 1));
    q.p = ov.dof > 0 ? std::clamp(ov.p + ov.p_se * t(rng), 1.0, kMaxOverlapP) : ov.p;
    q.m_static = mem(i, 0);
    q.m_act = std::max(0.0, mem(i, 1));
    q.e0 = std::max(0.0, ev(i, 0));
    q.e1 = std::max(0.0, ev(i, 1));
    q.in_s = std::max(0.0, in(i, 0));
    q.in_exposed = std::max(0.0, in(i, 1));
    if (models_.statistical) {
      q.s_min = std::max(1e-3 * point_.s_min, stat(i, 0));
      q.b_noise = std::max(1e-3 * point_.b_noise, stat(i, 1));
    }
    draws_[static_cast<size_t>(i)] = q;
  }
}

double Predictor::fixed_epochs() const { return options_.epochs > 0 ? options_.epochs : 1.0; }

double Predictor::memory_per_worker(const MachineSpec& m, int64_t wpn) const {
  const double dev = static_cast<double>(m.device_memory_bytes);
  if (wpn <= m.devices_per_node) return dev;
  return dev * static_cast<double>(m.devices_per_node) / static_cast<double>(wpn);
}

int64_t Predictor::max_batch_per_worker(const MachineSpec& m, int64_t wpn) const {
  return models_.memory.max_batch(memory_per_worker(m, wpn), options_.memory_level);
}

AccumulationPlan Predictor::fit_to_memory(int64_t batch, const MachineSpec& m, int64_t wpn) const {
  return split_for_memory(batch, max_batch_per_worker(m, wpn),
                          m.name + " (" + format_bytes(memory_per_worker(m, wpn)) + " per worker)");
}

namespace {

// How one configuration's allreduce is timed. Across nodes the ring is as
// slow as its slowest link: the catalog's network or the profiled one,
// whichever is worse. Workers of one node sit next to each other on the
// ring, so each NIC carries one ring edge. A type that names its node's link
// (GPUs over NVLink or PCIe) is allreduced in two levels: inside the node over
// that link, then across nodes over the network (its figures where given,
// else the profiled ring).
struct RingTimer {
  double nodes = 1, per_node = 1, workers = 1;
  bool two_level = false;
  double alpha = 0, inv_bw = 0;  // the flat ring's
  AllreduceModel::Link intra, inter;

  double operator()(double bytes, double messages) const {
    return two_level ? AllreduceModel::hierarchical(nodes, per_node, bytes, messages, intra, inter)
                     : AllreduceModel::bucketed(workers, bytes, messages, alpha, inv_bw);
  }
};

// The timer for `c` on `m`, from the profiled ring's latency and inverse bandwidth.
RingTimer ring_timer(double alpha, double inv_bw, const Config& c, const MachineSpec& m) {
  RingTimer t;
  t.nodes = static_cast<double>(c.nodes);
  t.per_node = static_cast<double>(c.workers_per_node);
  t.workers = t.nodes * t.per_node;
  t.alpha = alpha;
  t.inv_bw = inv_bw;
  if (c.nodes > 1) {
    t.alpha = std::max(t.alpha, m.network_latency_s);
    if (m.network_gbps > 0) t.inv_bw = std::max(t.inv_bw, 8.0 / (m.network_gbps * 1e9));
  }
  t.two_level = m.intra_node.gbytes_per_s > 0;
  t.intra = {m.intra_node.latency_s > 0 ? m.intra_node.latency_s : alpha, 1.0 / (m.intra_node.gbytes_per_s * 1e9)};
  t.inter = {std::max(alpha, m.network_latency_s), m.network_gbps > 0 ? 8.0 / (m.network_gbps * 1e9) : inv_bw};
  return t;
}

}  // namespace

double Predictor::communication(const Params& q, const Config& c, const MachineSpec& m, double forward_backward,
                                Breakdown& r) const {
  const RingTimer allreduce_of = ring_timer(q.alpha, q.inv_bw, c, m);
  const double modelled = allreduce_of(static_cast<double>(gradient_bytes_), buckets_);
  const RingCalibration& ring = ring_calibration(c);
  r.allreduce_s = modelled * ring.allreduce_scale;
  // The micro-batch whose backward carries the allreduce: across nodes, on
  // the machine type's say, the allreduce's own work takes its share from
  // the cores backward runs on (the profile's one node cannot show it).
  const double on_cores = c.nodes > 1 ? m.allreduce_on_cores * modelled : 0.0;
  r.compute_s = forward_backward + on_cores;
  // Buckets overlap only the last micro-batch's backward (DDP's no_sync()):
  // from where the profile saw each bucket ready, else by the fitted p.
  double last = 0;
  if (const auto* ready = bucket_ready_fraction(static_cast<double>(c.batch_per_worker))) {
    last = pipelined_step(r.compute_s, *ready,
                          [&](size_t k) { return allreduce_of(bucket_bytes_[k], 1) * ring.allreduce_scale; });
  } else {
    const double last_bucket = allreduce_of(static_cast<double>(last_bucket_bytes_), 1) * ring.allreduce_scale;
    last = OverlapModel::step(r.compute_s, r.allreduce_s, last_bucket, ring.overlap_p > 0 ? ring.overlap_p : q.p);
  }
  r.exposed_comm_s = last - r.compute_s;
  return last;
}

double Predictor::evaluation_pass_s(const Params& q, const Config& c, const MachineSpec& m, double forward_backward,
                                    double slow, int64_t samples) const {
  const double wpn = static_cast<double>(c.workers_per_node);
  const double n = static_cast<double>(c.nodes) * wpn, b = static_cast<double>(c.batch_per_worker);
  const double per_worker = std::ceil(static_cast<double>(samples) / n);
  double s = models_.evaluation.source == EvaluationSource::FromCompute
                 ? std::ceil(per_worker / b) * forward_backward / 3
                 : (q.e0 + q.e1 * per_worker) * slow / compute_scale_;  // measured on its own, not calibrated
  // Evaluation reads its shard as it goes, without prefetching: all of it is waited for.
  s += models_.input.seconds(per_worker, wpn, q.in_s, m);
  return s * eval_scale_;
}

Breakdown Predictor::evaluate(const Params& q, const Config& c, const MachineSpec& m) const {
  Breakdown r;
  const double nodes = static_cast<double>(c.nodes), wpn = static_cast<double>(c.workers_per_node);
  const double n = nodes * wpn, b = static_cast<double>(c.batch_per_worker);
  const double k = static_cast<double>(c.accumulation_steps);
  const double global = n * b * k;
  const double slow = models_.compute.contention_factor(wpn, q.gamma) / m.relative_speed * compute_scale_;

  const double forward_backward = models_.compute.forward_backward(b, q.p0, q.c) * slow;
  r.optimizer_s = q.t_opt * slow;
  const double last = communication(q, c, m, forward_backward, r);
  // Every micro-batch is read and decoded (input_model.hpp): the node's
  // loaders serve all its workers, at the machine's speed, not calibrated.
  r.input_s = models_.input.seconds(b, wpn, q.in_s, m);
  r.input_wait_s = InputModel::wait(forward_backward, r.input_s, q.in_exposed);
  r.iteration_s = (k - 1) * forward_backward + last + r.optimizer_s + k * r.input_wait_s;

  // The engine's count: ceil(D / N) samples per rank, in micro-batches of b,
  // grouped k to an optimizer step.
  const double per_rank = std::ceil(static_cast<double>(train_samples_) / n);
  r.iterations_per_epoch = std::ceil(std::ceil(per_rank / b) / k);

  r.eval_s = test_samples_ > 0 && options_.evaluations_per_epoch > 0
                 ? evaluation_pass_s(q, c, m, forward_backward, slow, test_samples_)
                 : 0;
  r.final_test_s =
      final_test_samples_ > 0 ? evaluation_pass_s(q, c, m, forward_backward, slow, final_test_samples_) : 0;
  r.epoch_s = r.iterations_per_epoch * r.iteration_s + options_.evaluations_per_epoch * r.eval_s;

  if (to_target()) {
    r.steps = StatisticalModel::steps(global, q.s_min, q.b_noise, models_.statistical->epochs_floor_batch);
    r.epochs = r.steps / r.iterations_per_epoch;
  } else {
    r.epochs = fixed_epochs();
    r.steps = r.epochs * r.iterations_per_epoch;
  }
  r.time_s = r.steps * r.iteration_s + r.epochs * options_.evaluations_per_epoch * r.eval_s + r.final_test_s;
  r.cost = r.time_s / 3600.0 * nodes * m.price_per_hour;
  r.memory_bytes = q.m_static + q.m_act * b;
  return r;
}

Breakdown Predictor::point(const Config& c, const MachineSpec& m) const { return evaluate(point_, c, m); }

namespace {

void check_config(const Config& c) {
  if (c.nodes < 1 || c.workers_per_node < 1 || c.batch_per_worker < 1 || c.accumulation_steps < 1) {
    throw std::invalid_argument("configuration: nodes, workers per node, batch per worker and accumulation steps "
                                "must all be at least 1");
  }
}

Interval interval_of(double estimate, std::vector<double>& v, double level) {
  Interval out;
  out.estimate = estimate;
  if (v.empty()) {
    out.lo = out.hi = estimate;
    return out;
  }
  std::sort(v.begin(), v.end());
  out.lo = std::min(estimate, sorted_quantile(v, (1 - level) / 2));
  out.hi = std::max(estimate, sorted_quantile(v, 1 - (1 - level) / 2));
  return out;
}

// A configuration the machine can start: at least one of everything, and no
// more workers on a node than it runs.
void check_layout(const Config& c, const MachineSpec& m) {
  check_config(c);
  if (c.workers_per_node > m.max_workers_per_node) {
    throw InfeasibleError(fmt::format("configuration: {} workers per node exceed the {} that {} runs",
                                      c.workers_per_node, m.max_workers_per_node, m.name));
  }
}

// The micro-batch fits a worker's memory (`max_batch` of it); where it does
// not, the error names the split into accumulation steps that would.
void check_memory(const Predictor& predictor, const Config& c, const MachineSpec& m, int64_t max_batch) {
  const auto& memory = predictor.models().memory;
  if (max_batch < 1) {
    throw InfeasibleError(fmt::format("memory: not even a batch of 1 fits {} ({} per worker; static memory alone is {})",
                                      m.name, format_bytes(predictor.memory_per_worker(m, c.workers_per_node)),
                                      format_bytes(memory.bytes(0))));
  }
  if (c.batch_per_worker > max_batch) {
    const auto split = split_for_memory(c.batch_per_worker * c.accumulation_steps, max_batch, m.name);
    throw InfeasibleError(fmt::format(
        "memory: a per-worker batch of {} needs up to {} but {} gives a worker {}; the largest that fits is {}: use "
        "batch {} with {} accumulation steps",
        c.batch_per_worker, format_bytes(memory.upper_bytes(static_cast<double>(c.batch_per_worker))), m.name,
        format_bytes(predictor.memory_per_worker(m, c.workers_per_node)), max_batch, split.micro_batch, split.steps));
  }
}

// Each quantity's interval: its estimate at the fitted parameters, and the
// `level` quantile range of the parameter draws' values.
void fill_intervals(Prediction& p, const Breakdown& est, const std::vector<Breakdown>& sims, double level) {
  const auto interval = [&](double Breakdown::*value) {
    std::vector<double> v;
    v.reserve(sims.size());
    for (const auto& s : sims) v.push_back(s.*value);
    return interval_of(est.*value, v, level);
  };
  const auto fill = [&](Interval Prediction::*field, double Breakdown::*value) { p.*field = interval(value); };
  p.per_step.compute_s = interval(&Breakdown::compute_s);
  p.per_step.allreduce_s = interval(&Breakdown::allreduce_s);
  p.per_step.exposed_comm_s = interval(&Breakdown::exposed_comm_s);
  p.per_step.input_wait_s = interval(&Breakdown::input_wait_s);
  p.per_step.iteration_s = interval(&Breakdown::iteration_s);
  fill(&Prediction::epoch_s, &Breakdown::epoch_s);
  fill(&Prediction::eval_s, &Breakdown::eval_s);
  fill(&Prediction::final_test_s, &Breakdown::final_test_s);
  fill(&Prediction::memory_bytes, &Breakdown::memory_bytes);
  fill(&Prediction::steps, &Breakdown::steps);
  fill(&Prediction::epochs, &Breakdown::epochs);
  fill(&Prediction::time_s, &Breakdown::time_s);
  fill(&Prediction::cost, &Breakdown::cost);
}

// What the machine type changes about the prediction: its network, speed,
// node link and the allreduce's share of the cores, where they apply.
std::vector<std::string> machine_notes(const Config& c, const MachineSpec& m) {
  std::vector<std::string> notes;
  if (c.nodes > 1 && m.network_gbps > 0 && m.intra_node.gbytes_per_s <= 0) {
    notes.push_back(fmt::format("network: between nodes the ring runs at min(profiled, {:g} Gb/s) with latency "
                                "max(profiled, {:g} us)",
                                m.network_gbps, m.network_latency_s * 1e6));
  }
  if (!m.speed_note.empty()) {
    notes.push_back(m.speed_note);
  } else if (m.relative_speed != 1) {
    notes.push_back(fmt::format("compute: profiled times divided by {}'s relative speed {:g}", m.name,
                                m.relative_speed));
  }
  if (m.intra_node.gbytes_per_s > 0 && c.workers() > 1) {
    notes.push_back(fmt::format(
        "allreduce: in two levels, inside the node over {} at {:g} GB/s per device and direction{}, then across "
        "nodes at {}",
        m.intra_node.kind.empty() ? std::string("its link") : m.intra_node.kind, m.intra_node.gbytes_per_s,
        m.intra_node.latency_s > 0 ? fmt::format(" ({:g} us a step)", m.intra_node.latency_s * 1e6)
                                   : std::string(" (the profiled latency a step)"),
        m.network_gbps > 0 ? fmt::format("{:g} Gb/s", m.network_gbps) : std::string("the profiled ring's speed")));
  }
  if (c.nodes > 1 && m.allreduce_on_cores > 0) {
    notes.push_back(fmt::format("compute: backward gives {:g} of the allreduce's time to its work on the same cores "
                                "({}'s allreduce_on_cores)",
                                m.allreduce_on_cores, m.name));
  }
  return notes;
}

}  // namespace

Prediction Predictor::predict(const Config& c, const MachineSpec& m) const {
  check_layout(c, m);
  Prediction p;
  p.machine = m;
  p.config = c;
  p.workers = c.workers();
  p.global_batch = c.global_batch();
  p.max_batch_per_worker = max_batch_per_worker(m, c.workers_per_node);
  p.to_target = to_target();
  p.target_accuracy = p.to_target ? models_.statistical->target_accuracy : 0.0;
  p.level = options_.level;
  check_memory(*this, c, m, p.max_batch_per_worker);

  const Breakdown est = evaluate(point_, c, m);
  std::vector<Breakdown> sims;
  sims.reserve(draws_.size());
  for (const auto& q : draws_) sims.push_back(evaluate(q, c, m));
  fill_intervals(p, est, sims, options_.level);

  p.notes = machine_notes(c, m);
  if (est.final_test_s > 0) {
    p.notes.push_back(fmt::format("time: includes one reading of {} test samples at the end", final_test_samples_));
  }
  if (!p.to_target) {
    p.notes.push_back(fmt::format("time is for {:g} epoch(s), not to a target accuracy{}", fixed_epochs(),
                                  models_.statistical ? "" : " (no statistical model in the profile)"));
  }
  return p;
}

std::pair<Interval, Interval> Predictor::time_cost_interval(const Config& c, const MachineSpec& m) const {
  const Breakdown est = evaluate(point_, c, m);
  std::vector<double> t, cost;
  t.reserve(draws_.size());
  cost.reserve(draws_.size());
  for (const auto& q : draws_) {
    const auto s = evaluate(q, c, m);
    t.push_back(s.time_s);
    cost.push_back(s.cost);
  }
  return {interval_of(est.time_s, t, options_.level), interval_of(est.cost, cost, options_.level)};
}

std::vector<std::string> Predictor::assumptions() const {
  std::vector<std::string> out = {
      "one process per worker; gradients averaged by bucketed ring allreduce overlapped with backward (as the engine)",
      models_.input.measured
          ? "reading and decoding: the loader timed alone and in steps it fed; a node's loaders share its cores "
            "(input_model.hpp)"
          : "data loading costs nothing (the loader was not timed)",
      "workers of a node are adjacent on the ring, so inter-node traffic per NIC equals one worker's",
      "the largest per-worker batch uses the upper " + format_number(100 * options_.memory_level, 3) +
          "% bound of the memory model (fit uncertainty plus one run's scatter)",
      fmt::format("intervals: {} parameter draws from each fit's Student-t posterior; {}% central range",
                  options_.draws, std::lround(options_.level * 100)),
  };
  if (!bucket_readiness_.empty()) {
    out.push_back(fmt::format("overlap: each bucket's allreduce starts where the profile saw backward make it ready "
                              "(at {} profiled batch sizes), one bucket after another; the fitted p below is not used",
                              bucket_readiness_.size()));
  }
  for (auto& n : models_.all_notes()) out.push_back(std::move(n));
  for (const auto& n : calibration_notes_) out.push_back(n);
  return out;
}

}  // namespace tula::predict
