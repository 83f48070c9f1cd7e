#include "profile/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <optional>

#include <fmt/format.h>
#include <torch/torch.h>

#include "common/atomic_file.hpp"
#include "common/engine_names.hpp"
#include "common/math_library.hpp"
#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "data/dataset.hpp"
#include "kernels/openmp_wait.hpp"
#include "models/script_model.hpp"
#include "models/zoo.hpp"
#include "predict/allreduce_model.hpp"
#include "predict/error.hpp"
#include "predict/stats.hpp"
#include "profile/comm_trials.hpp"
#include "profile/comm_worker.hpp"
#include "profile/device.hpp"
#include "profile/grid.hpp"
#include "profile/hardware.hpp"
#include "profile/input_trials.hpp"
#include "profile/pilot.hpp"
#include "profile/time_budget.hpp"
#include "profile/trial_model.hpp"
#include "train/data_sets.hpp"

namespace tula::profile {
namespace {

using common::Clock;
using common::since;
using nlohmann::json;

// How much a --quick profile measures: small enough to finish in well under a
// minute on a 2-core machine for the small zoo models, large enough for every
// required fit to have residual degrees of freedom.
struct Effort {
  int64_t first_batch, max_batch;
  double batch_ratio;
  int warmup, repeats;
  double max_step_s;        // the automatic batch grid stops after a slower step
  double message_ratio;     // allreduce sizes grow by this factor
  int allreduce_warmup, allreduce_repeats;
  int overlap_warmup, overlap_steps;
  std::vector<int64_t> overlap_near;  // overlap steps at the measured batches nearest these
  int eval_warmup, eval_repeats;
  double eval_budget_s;
  int worker_timeout_s;
};

Effort effort_for(const ProfileOptions& o) {
  Effort e = o.quick ? Effort{4, 256, 4, 1, 3, 0.5, 8, 2, 7, 1, 3, {16, 64}, 1, 2, 0.4, 120}
                     : Effort{1, o.max_batch_size, 2, 3, 7, 3.0, 4, 3, 10, 2, 6, {32, 128}, 1, 3, 5.0, 600};
  e.max_batch = std::min(e.max_batch, o.max_batch_size);
  e.first_batch = std::min(e.first_batch, e.max_batch);
  if (o.warmup >= 0) e.warmup = e.allreduce_warmup = e.overlap_warmup = e.eval_warmup = o.warmup;
  if (o.repeats > 0) e.repeats = e.allreduce_repeats = e.overlap_steps = e.eval_repeats = o.repeats;
  if (o.communication.worker_timeout_s > 0) e.worker_timeout_s = o.communication.worker_timeout_s;
  return e;
}

std::string now_iso8601() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// A zoo model, or a TorchScript file (checked when it is loaded for the first trial).
void check_model_name(const std::string& name) {
  if (common::is_script_model_path(name)) return;
  std::string names;
  for (const auto& info : models::model_catalog()) {
    if (info.name == name) return;
    names += (names.empty() ? "" : ", ") + info.name;
  }
  throw std::invalid_argument("--model: unknown model '" + name + "' (the zoo has: " + names +
                              "; or give a TorchScript file PATH.pt)");
}

}  // namespace

train::DataOptions training_data(const ProfileOptions& o) {
  train::DataOptions d;
  const bool synthetic = o.data.dataset.empty() || o.data.dataset == "synthetic";
  if (synthetic) {
    const auto dims = o.data.input_shape.empty() ? std::vector<int64_t>{3, 32, 32} : o.data.input_shape;
    d.dataset = "synthetic";
    d.synthetic_size = o.data.train_samples > 0 ? o.data.train_samples : 10000;
    d.synthetic_channels = dims[0];
    d.synthetic_height = dims[1];
    d.synthetic_width = dims[2];
    d.synthetic_classes = o.data.classes;
  } else {
    d.dataset = o.data.dataset;
    d.data_dir = o.data.data_dir;
  }
  d.image_size = o.data.image_size;
  d.decode_threads = o.data.decode_threads;
  d.augment = o.data.augment;
  return train::with_image_channels(d, o.model);
}

namespace {

// The data's description and the input the model sees, resolved as `tula
// train` resolves them (the same image size rule), so the profile times what
// training will run; the training split as opened in `opened_train`.
std::vector<int64_t> resolve_data(const ProfileOptions& o, predict::DataInfo& info, ModelTarget& target,
                                  std::shared_ptr<data::Dataset>& opened_train) {
  // As `tula train` would read it: the synthetic set's defaults, or an image
  // folder decoded to the channels and size training will use.
  const auto data = training_data(o);
  data::SampleShape shape;
  if (data.dataset == "synthetic") {
    shape = {data.synthetic_channels, data.synthetic_height, data.synthetic_width};
    target.classes = data.synthetic_classes;
    info.name = "synthetic";
    info.train_samples = data.synthetic_size;
    info.test_samples = o.data.test_samples > 0 ? o.data.test_samples : std::max<int64_t>(1, info.train_samples / 5);
  } else {
    auto train = data::open_dataset(train::dataset_options(data, o.model, 0, data::Split::kTrain),
                                    data::Split::kTrain);
    const auto test = data::open_dataset(train::dataset_options(data, o.model, 0, data::Split::kTest),
                                         data::Split::kTest);
    shape = train->shape();
    target.classes = train->num_classes();
    info.name = o.data.dataset;
    info.train_samples = train->size();
    info.test_samples = test->size();
    opened_train = std::move(train);
  }
  const int64_t image = models::input_size(o.model, o.data.image_size, shape.height, shape.width);
  const bool resized = image != shape.height || image != shape.width;
  target.channels = shape.channels;
  target.height = resized ? image : shape.height;
  target.width = resized ? image : shape.width;
  info.input_shape = {target.channels, target.height, target.width};
  return {shape.channels, shape.height, shape.width};
}

// The batch nearest (in ratio) to each wanted one, deduplicated.
std::vector<int64_t> nearest_batches(const std::vector<int64_t>& batches, const std::vector<int64_t>& wanted) {
  std::vector<int64_t> out;
  for (const int64_t w : wanted) {
    int64_t best = 0;
    double best_d = 1e300;
    for (const int64_t b : batches) {
      const double d = std::abs(std::log(static_cast<double>(b) / static_cast<double>(w)));
      if (d < best_d) best_d = d, best = b;
    }
    if (best > 0 && std::find(out.begin(), out.end(), best) == out.end()) out.push_back(best);
  }
  return out;
}

std::vector<int64_t> batches_of(const std::vector<predict::ComputeSample>& measured) {
  std::vector<int64_t> out;
  for (const auto& s : measured) out.push_back(s.batch_per_worker);
  return out;
}

// Each repeat of one compute sample, as the measurement section keeps a
// grid that the anchor check set aside.
json compute_samples_json(const std::vector<predict::ComputeSample>& samples) {
  json out = json::array();
  for (const auto& s : samples) {
    out.push_back({{"batch_per_worker", s.batch_per_worker}, {"forward_backward_s", s.forward_backward_s},
                   {"optimizer_s", s.optimizer_s}});
  }
  return out;
}

std::string seconds_text(double s) { return common::format_seconds(s); }

// Three sample counts n, 2n, 4n whose evaluation fits the time budget, from
// forward time taken as a third of forward+backward at the largest batch: a
// first guess, which the trials correct by their timed warm-up pass (the
// guess ran 1.5 times short on LeNet-5 and small_cnn).
std::vector<int64_t> evaluation_counts(const std::vector<predict::ComputeSample>& measured, const Effort& e) {
  const auto& last = measured.back();
  const double per_sample = predict::median(last.forward_backward_s) / 3.0 / static_cast<double>(last.batch_per_worker);
  const double runs = 7.0 * e.eval_repeats;
  const auto n = static_cast<int64_t>(std::clamp(e.eval_budget_s / (runs * std::max(per_sample, 1e-9)), 16.0, 512.0));
  return {n, 2 * n, 4 * n};
}

// The measurement taken again times messages up to this size beyond the
// gradient's (a large model's gradient already has a transfer to measure).
constexpr int64_t kRetryLargestMessageBytes = int64_t{64} << 20;

bool allreduce_fits(const std::vector<predict::AllreduceSample>& samples) {
  try {
    predict::fit_allreduce(samples);
    return true;
  } catch (const predict::FitError&) {
    return false;
  }
}

std::vector<int64_t> default_workers(int64_t cores) {
  std::vector<int64_t> out{2};
  for (int64_t n = 4; n <= cores; n *= 2) out.push_back(n);
  return out;
}

}  // namespace

void validate(const ProfileOptions& o) {
  check_model_name(o.model);
  if (o.device != "cpu" && o.device != "cuda" && o.device != "auto") {
    throw std::invalid_argument("--device: '" + o.device + "' is not a device (cpu, cuda or auto)");
  }
  const bool synthetic = o.data.dataset.empty() || o.data.dataset == "synthetic";
  if (!synthetic && !o.data.input_shape.empty()) {
    throw std::invalid_argument("--input-shape is for synthetic input; --dataset " + o.data.dataset +
                                " has its own shape (use --image-size to resize)");
  }
  if (!o.data.input_shape.empty() && o.data.input_shape.size() != 3) throw std::invalid_argument("--input-shape must be CxHxW");
  if (o.data.classes < 1) throw std::invalid_argument("--classes must be at least 1");
  if (o.precision != "fp32" && o.precision != "bf16" && o.precision != "fp16") {
    throw std::invalid_argument("--precision: '" + o.precision + "' is not fp32, bf16 or fp16");
  }
  if (o.max_batch_size < 1) throw std::invalid_argument("--max-batch-size must be at least 1");
  if (!o.batch_sizes.empty() && static_cast<int>(o.batch_sizes.size()) < predict::kMinComputePoints) {
    throw std::invalid_argument(fmt::format(
        "--batch-sizes: give at least {} distinct sizes (the compute and memory fits need them), or 'auto'",
        predict::kMinComputePoints));
  }
  for (const int64_t n : o.workers) {
    if (n < 2) throw std::invalid_argument("--workers: each count must be at least 2 (one worker has no allreduce)");
  }
  if (o.communication.bucket_mb <= 0 || o.communication.first_bucket_mb <= 0) throw std::invalid_argument("--bucket-mb and --first-bucket-mb must be positive");
  if (!o.pilot_metrics.empty() && !(o.target_accuracy > 0 && o.target_accuracy <= 1)) {
    throw std::invalid_argument("--pilot-metrics needs --target-accuracy in (0, 1]: the accuracy the pilots count steps to");
  }
}

ResolvedInput resolve_input(const ProfileOptions& o) {
  ResolvedInput r;
  r.target.model = o.model;
  r.target.dropout = o.dropout;
  r.target.precision = o.precision;
  r.data_shape = resolve_data(o, r.data, r.target, r.train_set);
  return r;
}

namespace {

// The anchor (anchor.hpp): one step timed before and after the compute
// grid, the batch and input it runs, and what it showed.
struct SessionAnchor {
  int64_t batch = 0;
  AnchorOptions options;
  data::Batch input;
  double last_s = 0;
  AnchorReport report;
};

// The time budget's plan, the step estimate it was made from, and what it cut.
struct SessionBudget {
  ProfilePlan plan;
  StepEstimate step_estimate;
  std::vector<std::string> cuts;
  double planned_s = 0;
};

// What the trials measured, before it becomes the profile's samples.
struct SessionResults {
  std::vector<ComputeTrialResult> grids;
  ComputeTrialResult compute;
  std::vector<std::string> comm_notes, pilot_notes;
  CommTrialResult comm;
  InputTrialResult input;
};

// Where the session's lines go: its progress, and its warnings (to the
// progress as "warning: ..." where none is given).
struct SessionLogs {
  const Log& log;
  const Log& warn;
};

// One run of the profiler: the trials in order, each a method, sharing what
// the earlier ones measured and the time budget's plan.
class ProfileSession {
 public:
  ProfileSession(const ProfileOptions& o, const Log& log, const Log& warn, const ResolvedInput* input)
      : o_(o), logs_{log, warn}, given_input_(input), start_(Clock::now()), e_(effort_for(o)),
        budgeted_(o.time_budget_s > 0) {}

  ProfileRun run();

 private:
  void say(const std::string& line) const {
    if (logs_.log) logs_.log(line);
  }
  void warning(const std::string& text);
  double left_s() const { return o_.time_budget_s - since(start_); }
  std::string budget_text(double need) const;

  void set_up();
  void plan_trials();
  void plan_to_budget();
  double time_anchor();
  void compute_trials();
  void input_trials();
  void evaluation_trials();
  CommTrialOptions comm_options() const;
  void communication_trials();
  void pilot_metrics();
  void describe_measurement();
  void anchor_after_profile();
  void fit();
  void report_budget();

  const ProfileOptions& o_;
  SessionLogs logs_;
  const ResolvedInput* given_input_;
  const Clock::time_point start_;
  Effort e_;
  const bool budgeted_;
  ProfileRun run_;
  predict::Profile& p_ = run_.profile;
  ModelTarget target_;
  std::shared_ptr<data::Dataset> train_set_;  // opened by set_up; none for synthetic data
  int64_t threads_ = 1, memory_limit_ = 0;
  torch::Device device_{torch::kCPU};
  distributed::ReducerOptions buckets_;
  std::optional<TrialModel> model_;

  // The compute grid, its anchor (anchor.hpp) and the time budget's plan.
  ComputeTrialOptions ct_;
  std::vector<int64_t> comm_workers_;
  SessionAnchor anchor_;
  SessionBudget budget_;

  SessionResults results_;
};

void ProfileSession::warning(const std::string& text) {
  run_.warnings.push_back(text);
  if (logs_.warn) {
    logs_.warn(text);
  } else {
    say("warning: " + text);
  }
}

std::string ProfileSession::budget_text(double need) const {
  return "the time budget (about " + seconds_text(need) + " still needed, " + seconds_text(std::max(0.0, left_s())) +
         " left)";
}

void ProfileSession::set_up() {
  p_.created = now_iso8601();
  device_ = profile_device(o_.device);
  p_.hardware = describe_hardware(device_);
  p_.precision = o_.precision;
  const ResolvedInput input = given_input_ ? *given_input_ : resolve_input(o_);
  p_.data = input.data;
  target_ = input.target;
  train_set_ = input.train_set;
  threads_ = o_.threads > 0 ? o_.threads : p_.hardware.cores;
  torch::set_num_threads(static_cast<int>(threads_));
  memory_limit_ = o_.memory_limit_bytes > 0 ? o_.memory_limit_bytes : step_memory_budget(device_, p_.hardware);
  buckets_ = {static_cast<int64_t>(o_.communication.bucket_mb * (1 << 20)), static_cast<int64_t>(o_.communication.first_bucket_mb * (1 << 20))};
  p_.buckets = {buckets_.bucket_bytes, buckets_.first_bucket_bytes};
  model_.emplace(target_, nullptr, buckets_, device_);
  p_.model = {o_.model, model_->parameters(), model_->gradient_bytes(), model_->bucket_bytes(buckets_)};
  say(fmt::format("profiling {} ({} parameters) on {} {}x{}x{}, {} classes; {}, {} cores, {} threads{}", o_.model,
                  p_.model.parameters, p_.data.name, target_.channels, target_.height, target_.width,
                  target_.classes, p_.hardware.cpu_model, p_.hardware.cores, threads_, o_.quick ? " (quick)" : ""));
  if (const auto text = common::math_library_warning(); !text.empty()) warning(text);
  if (budgeted_) {
    say("time budget " + seconds_text(o_.time_budget_s) +
        ": the plan below is cut to fit it, never below the samples the fits need");
  }
}

void ProfileSession::plan_trials() {
  ct_.batches = o_.batch_sizes;
  ct_.auto_first = e_.first_batch;
  ct_.auto_ratio = e_.batch_ratio;
  ct_.auto_max = std::min(e_.max_batch, p_.data.train_samples);
  ct_.memory_limit_bytes = memory_limit_;
  ct_.max_step_seconds = e_.max_step_s;
  ct_.warmup = e_.warmup;
  ct_.repeats = e_.repeats;
  comm_workers_ = o_.workers.empty() ? default_workers(p_.hardware.cores) : o_.workers;

  // The anchor: one worker at a mid batch of the grid, timed before and after
  // the grid; its first timing also sizes the budget's plan.
  const auto planned = planned_batches(ct_, model_->has_batch_norm());
  anchor_.batch = planned.empty() ? 0 : planned[(planned.size() - 1) / 2];
  anchor_.options.threshold = o_.anchor_threshold;
  if (anchor_.batch > 0) anchor_.input = synthetic_batch(target_, anchor_.batch, 4242);

  budget_.plan.batches = planned;
  budget_.plan.warmup = ct_.warmup;
  budget_.plan.repeats = ct_.repeats;
  budget_.plan.anchor_steps = anchor_.options.warmup + anchor_.options.repeats;
  budget_.plan.max_step_s = o_.batch_sizes.empty() ? ct_.max_step_seconds : 0;
  budget_.plan.workers = comm_workers_;
  budget_.plan.overlap_batches = nearest_batches(planned, e_.overlap_near);
  budget_.plan.overlap_steps = e_.overlap_warmup + e_.overlap_steps;
  budget_.plan.evaluation_s = e_.eval_budget_s;
  if (budgeted_) {
    // Past the minimum, a batch whose trial would take the profile over its
    // budget (with what must still follow) ends the grid.
    ct_.stop_before = [this](int64_t b) -> std::string {
      const double need = compute_batch_seconds(budget_.plan, budget_.step_estimate, b) +
                          after_compute_seconds(budget_.plan, budget_.step_estimate) + budget_.plan.anchor_steps * budget_.step_estimate.seconds;
      return need <= left_s() ? "" : budget_text(need);
    };
  }
}

double ProfileSession::time_anchor() {
  warm_up([this] { model_->step(anchor_.input); }, anchor_.options);
  std::vector<double> t;
  for (int i = 0; i < anchor_.options.repeats; ++i) t.push_back(model_->step(anchor_.input).forward_backward_s);
  return anchor_.last_s = predict::median(t);
}

void ProfileSession::plan_to_budget() {
  budget_.step_estimate = {anchor_.batch, anchor_.last_s};
  if (budgeted_) {
    budget_.cuts = fit_to_budget(budget_.plan, budget_.step_estimate, left_s());
    if (o_.batch_sizes.empty()) {
      if (!budget_.plan.batches.empty()) ct_.auto_max = std::min(ct_.auto_max, budget_.plan.batches.back());
    } else {
      ct_.batches = budget_.plan.batches;
    }
    ct_.warmup = budget_.plan.warmup;
    ct_.repeats = budget_.plan.repeats;
    comm_workers_ = budget_.plan.workers;
    if (e_.overlap_near.size() > budget_.plan.overlap_batches.size()) e_.overlap_near.resize(budget_.plan.overlap_batches.size());
  }
  const auto est = estimate(budget_.plan, budget_.step_estimate);
  budget_.planned_s = since(start_) + est.total();
  if (!budgeted_) return;
  say("  plan: " + describe(budget_.plan) + "; estimated " + seconds_text(est.total()) + " more (compute " +
      seconds_text(est.compute_s) + ", evaluation " + seconds_text(est.evaluation_s) + ", communication " +
      seconds_text(est.communication_s) + "), " + seconds_text(left_s()) + " of the budget left");
  for (const auto& cut : budget_.cuts) say("  budget cut: " + cut);
  if (budget_.planned_s > o_.time_budget_s) say("  the smallest plan the fits allow is estimated past the budget; measuring it anyway");
}

void ProfileSession::compute_trials() {
  say("compute and memory, one worker:");
  AnchoredSteps anchored;
  anchored.time_anchor = [this] { return time_anchor(); };
  anchored.measure = [this](int attempt) {
    if (attempt == 0) plan_to_budget();
    if (attempt > 0) {
      // The same batches again, so the two grids are comparable and the one
      // kept spans the same range: a slow stretch must not end the second
      // grid early at the per-step time limit.
      say("compute and memory, one worker, again:");
      if (!results_.grids.front().compute.empty()) ct_.batches = batches_of(results_.grids.front().compute);
    }
    results_.grids.push_back(run_compute_trials(*model_, target_, ct_, logs_.log));
  };
  anchored.may_remeasure = [this]() -> std::string {
    if (!budgeted_) return "";
    double need = budget_.plan.anchor_steps * budget_.step_estimate.seconds + after_compute_seconds(budget_.plan, budget_.step_estimate);
    for (const auto& c : results_.grids.front().compute) need += compute_batch_seconds(budget_.plan, budget_.step_estimate, c.batch_per_worker);
    if (need <= left_s()) return "";
    return "another grid would take the profile past its time budget (about " + seconds_text(need) +
           " still needed, " + seconds_text(std::max(0.0, left_s())) + " left)";
  };
  if (anchor_.batch > 0) {
    anchor_.report = run_anchored(anchor_.batch, anchored, anchor_.options, logs_.log);
    results_.compute = std::move(results_.grids[static_cast<size_t>(anchor_.report.kept)]);
    if (!anchor_.report.warning.empty()) warning(anchor_.report.warning);
  } else {
    results_.compute = run_compute_trials(*model_, target_, ct_, logs_.log);
  }
  if (results_.compute.compute.empty()) {
    throw predict::InfeasibleError("not even the smallest batch fits the memory limit of " +
                                   common::format_bytes(static_cast<double>(memory_limit_)));
  }
  p_.compute = results_.compute.compute;
  p_.memory = results_.compute.memory;
}

void ProfileSession::input_trials() {
  say("input, one worker:");
  InputTrialOptions it;
  it.batch = anchor_.batch > 0 ? anchor_.batch : batches_of(p_.compute).front();
  if (o_.quick) it.loader_batches = 10, it.loader_seconds = 0.1, it.loader_max_seconds = 3, it.steps = 8;
  results_.input = run_input_trials(training_data(o_), o_.model, *model_, it, logs_.log, train_set_);
  p_.loader = {results_.input.loader};
  p_.input_steps = {results_.input.steps};
  p_.data.decoded_bytes_per_sample = results_.input.decoded_bytes_per_sample;
}

void ProfileSession::evaluation_trials() {
  say("evaluation, one worker:");
  EvaluationTrialOptions et;
  et.sample_counts = evaluation_counts(p_.compute, e_);
  et.warmup = e_.eval_warmup;
  et.repeats = e_.eval_repeats;
  et.budget_s = e_.eval_budget_s;
  p_.evaluation = run_evaluation_trials(*model_, target_, et, logs_.log);
}

CommTrialOptions ProfileSession::comm_options() const {
  CommTrialOptions comm;
  comm.workers = comm_workers_;
  comm.master_addr = o_.communication.master_addr;
  comm.master_port = o_.communication.master_port;
  comm.spec.target = target_;
  comm.spec.message_bytes = message_sizes(p_.model.gradient_bytes, e_.message_ratio);
  comm.spec.allreduce_warmup = e_.allreduce_warmup;
  comm.spec.allreduce_repeats = e_.allreduce_repeats;
  comm.spec.overlap_batches = nearest_batches(batches_of(p_.compute), e_.overlap_near);
  comm.spec.overlap_warmup = e_.overlap_warmup;
  comm.spec.overlap_steps = e_.overlap_steps;
  comm.spec.bucket_bytes = buckets_.bucket_bytes;
  comm.spec.first_bucket_bytes = buckets_.first_bucket_bytes;
  comm.spec.rendezvous_timeout_s = std::min(60, e_.worker_timeout_s);
  comm.spec.collective_timeout_s = std::min(120, e_.worker_timeout_s);
  if (budgeted_) {
    comm.stop_before = [this](int64_t n) -> std::string {
      ProfilePlan one = budget_.plan;
      one.workers = {n};
      const double need = after_compute_seconds(one, budget_.step_estimate) - one.evaluation_s;
      if (need <= left_s()) return "";
      return "the time budget (about " + seconds_text(need) + " needed, " + seconds_text(std::max(0.0, left_s())) +
             " left)";
    };
  }
  return comm;
}

void ProfileSession::communication_trials() {
  say("communication:");
  const CommTrialOptions comm = comm_options();
  results_.comm = run_comm_trials(comm, logs_.log);
  if (!allreduce_fits(results_.comm.allreduce)) {
    // Sub-millisecond collectives are at the mercy of the scheduler on a busy
    // machine; one more, longer measurement usually recovers the line. It
    // also times larger messages, whose transfer stands above that noise: a
    // small model's quick profile on a loaded machine failed twice in a row
    // with its 1.6 MiB largest message. The first run's samples stay in
    // measurement.workers_raw.
    results_.comm_notes.push_back("allreduce time did not grow with message size (load from elsewhere on the machine?); "
                          "measured again with twice the repeats and larger messages, and the second measurement "
                          "used");
    say("note: " + results_.comm_notes.back());
    if (budgeted_ && left_s() <= 0) results_.comm_notes.back() += " (past the time budget: the fit needs these samples)";
    CommTrialOptions again = comm;
    again.spec.overlap_batches.clear();
    again.spec.allreduce_warmup += 1;
    again.spec.allreduce_repeats *= 2;
    const int64_t largest = again.spec.message_bytes.back();
    for (const int64_t factor : {4, 16}) {
      if (largest * factor <= kRetryLargestMessageBytes) again.spec.message_bytes.push_back(largest * factor);
    }
    auto second = run_comm_trials(again, logs_.log);
    results_.comm.allreduce = std::move(second.allreduce);
    for (auto& doc : second.raw) results_.comm.raw.push_back(std::move(doc));
  }
  for (const auto& n : results_.comm.notes) results_.comm_notes.push_back(n);
  p_.allreduce = results_.comm.allreduce;
  p_.overlap = results_.comm.overlap;
  p_.compute.insert(p_.compute.end(), results_.comm.contention.begin(), results_.comm.contention.end());
}

void ProfileSession::pilot_metrics() {
  if (o_.pilot_metrics.empty()) return;
  auto pilots = read_pilot_metrics(o_.pilot_metrics, o_.target_accuracy);
  p_.gradient_noise = std::move(pilots.noise);
  p_.pilots = std::move(pilots.pilots);
  if (!p_.pilots.empty()) p_.target_accuracy = o_.target_accuracy;
  results_.pilot_notes = std::move(pilots.notes);
  for (const auto& n : results_.pilot_notes) say("note: " + n);
}

// How each sample was measured, for a reader of the profile.
json measurement_methods() {
  return {{"compute", "one worker with all threads; a step as `tula train` runs it with one worker: forward, loss, "
                      "backward (forward_backward_s), then zeroing gradients, the reducer's gradient statistics and "
                      "the SGD step (optimizer_s); random inputs of the data's shape; each batch after warm-up steps"},
          {"contention", "forward_backward_s of the slowest rank in each overlap step (the step waits for it), "
                         "N workers on this node, cores / N threads each (as `tula train --nproc N`)"},
          {"memory", "bytes counted by LibTorch's allocator through the thread-local memory-reporting hook "
                     "(what torch.profiler's profile_memory uses): weights and buffers as built, the reducer's "
                     "gradient buckets, the momentum buffers the first SGD step allocates, plus the peak of one "
                     "step at the batch with its inputs; excludes oneDNN scratch buffers and allocator overhead"},
          {"activations", "bytes live when forward ends (inputs and tensors saved for backward), per batch"},
          {"evaluation", "forward in eval mode without gradients over n random samples in batches of 512, one worker"},
          {"input", "`tula train`'s loader on the training split (its transforms, decode threads and prefetch): "
                    "seconds per batch prepared with nothing else running (loader), then the wall time of training "
                    "steps it fed, the wait for the batch included (input_steps)"},
          {"allreduce", "Gloo allreduce of n zeros after a barrier, timed on rank 0; workers on loopback"},
          {"overlap", "real data-parallel steps with the bucketed reducer; hidden_fraction is the median of the "
                      "reducer's per-step share of allreduce time before backward ended; step_s = compute + exposed "
                      "communication"}};
}

void ProfileSession::describe_measurement() {
  run_.measurement = {{"tool", "tula profile"},
                      {"quick", o_.quick},
                      {"threads", threads_},
                      {"openmp_wait", kernels::openmp_wait_setting()},
                      {"warmup", ct_.warmup},
                      {"repeats", ct_.repeats},
                      {"memory_limit_bytes", memory_limit_},
                      {"device", device_.str()},
                      {"precision", o_.precision},
                      {"methods", measurement_methods()},
                      {"static_memory",
                       {{"weights_bytes", model_->weight_bytes()},
                        {"gradient_buckets_bytes", model_->gradient_buffer_bytes()},
                        {"optimizer_state_bytes", model_->optimizer_state_bytes()}}},
                      {"memory_detail", results_.compute.memory_detail},
                      {"grid_notes", results_.compute.notes},
                      {"input", describe_input(results_.input)},
                      {"communication_notes", results_.comm_notes},
                      {"pilot_notes", results_.pilot_notes},
                      {"workers_raw", results_.comm.raw}};
  if (results_.compute.out_of_memory_batch > 0) {
    run_.measurement["out_of_memory"] = {{"batch", results_.compute.out_of_memory_batch},
                                         {"largest_fitting_batch", results_.compute.largest_fitting_batch}};
  }
  for (const auto& n : results_.compute.notes) say("note: " + n);
}

void ProfileSession::anchor_after_profile() {
  if (anchor_.batch <= 0) return;
  auto& a = run_.measurement["anchor"] = anchor_.report.to_json();
  if (anchor_.report.remeasured) a["set_aside_compute"] = compute_samples_json(results_.grids[anchor_.report.kept == 0 ? 1 : 0].compute);
  // Once more after the communication trials: recorded, not acted on (they
  // are not re-measured), so a reader can see whether the machine held
  // still for the rest of the profile.
  const double after = time_anchor();
  a["after_profile_s"] = after;
  say("anchor after the whole profile: " + seconds_text(after) + " (" + common::percent(disagreement(anchor_.report.end_s(), after)) +
      " from the one after the kept grid)");
}

void ProfileSession::fit() {
  try {
    run_.fitted = predict::fit_profile(p_);
  } catch (const std::runtime_error& err) {  // FitError or ProfileError
    run_.fit_error = err.what();
  }
  if (!run_.fitted && (!p_.gradient_noise.empty() || !p_.pilots.empty())) {
    // The stated fallback: pilot metrics that cannot support a statistical
    // model must not cost the rest of the profile. Without them the profile
    // predicts time per epoch instead of time to accuracy.
    auto without = p_;
    without.gradient_noise.clear();
    without.pilots.clear();
    without.target_accuracy = 0;
    try {
      run_.fitted = predict::fit_profile(without);
      const std::string note = "pilot metrics left out, they do not support a statistical model: " + run_.fit_error;
      say("note: " + note);
      run_.measurement["pilot_notes"].push_back(note);
      run_.measurement["dropped_gradient_noise_samples"] = p_.gradient_noise.size();
      p_ = std::move(without);
      run_.fit_error.clear();
    } catch (const std::runtime_error&) {
      // The measurements themselves do not fit: report the original error.
    }
  }
  if (run_.fitted) p_.fitted = predict::to_json(*run_.fitted);
  if (run_.fitted && p_.data.decoded_bytes_per_sample > 0) {
    const auto& mem = run_.fitted->memory.params;
    const double training = mem.value(0) + mem.value(1) * static_cast<double>(results_.input.loader.batch);
    const auto line = describe_cache_fit(p_.data.decoded_bytes_per_sample, p_.data.train_samples, training,
                                         p_.hardware.device.memory_bytes, p_.hardware.cores);
    run_.measurement["cache_fit"] = line;
    say(line);
  }
}

void ProfileSession::report_budget() {
  const double wall = since(start_);
  run_.measurement["wall_s"] = wall;
  if (budgeted_) {
    run_.measurement["time_budget"] = {{"budget_s", o_.time_budget_s},
                                       {"wall_s", wall},
                                       {"planned_s", budget_.planned_s},
                                       {"within", wall <= o_.time_budget_s},
                                       {"cuts", budget_.cuts}};
    if (wall <= o_.time_budget_s) {
      say("took " + seconds_text(wall) + " of the " + seconds_text(o_.time_budget_s) + " time budget");
    } else {
      warning("took " + seconds_text(wall) + ", " + seconds_text(wall - o_.time_budget_s) + " over the " +
              seconds_text(o_.time_budget_s) + " time budget (planned " + seconds_text(budget_.planned_s) +
              "; the fits' minimum samples are measured whatever the budget)");
    }
  }
  run_.measurement["warnings"] = run_.warnings;
}

ProfileRun ProfileSession::run() {
  set_up();
  plan_trials();
  compute_trials();
  input_trials();
  evaluation_trials();
  communication_trials();
  pilot_metrics();
  describe_measurement();
  anchor_after_profile();
  fit();
  report_budget();
  return std::move(run_);
}

}  // namespace

ProfileRun run_profile(const ProfileOptions& o, const Log& log, const Log& warn, const ResolvedInput* input) {
  validate(o);
  return ProfileSession(o, log, warn, input).run();
}

nlohmann::json profile_document(const ProfileRun& run) {
  auto j = predict::to_json(run.profile);
  j["measurement"] = run.measurement;
  return j;
}

void write_profile(const ProfileRun& run, const std::string& path) {
  common::write_file_atomically(path, profile_document(run).dump(2) + "\n");
}

}  // namespace tula::profile
