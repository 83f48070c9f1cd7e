#include "profile/profiler.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>

#include <torch/torch.h>

#include "common/atomic_file.hpp"
#include "common/stopwatch.hpp"
#include "common/text.hpp"
#include "data/dataset.hpp"
#include "models/zoo.hpp"
#include "predict/allreduce_model.hpp"
#include "predict/error.hpp"
#include "predict/stats.hpp"
#include "profile/comm_trials.hpp"
#include "profile/comm_worker.hpp"
#include "profile/grid.hpp"
#include "profile/hardware.hpp"
#include "profile/pilot.hpp"
#include "profile/time_budget.hpp"
#include "profile/trial_model.hpp"

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
  Effort e = o.quick ? Effort{4, 256, 4, 1, 3, 0.5, 8, 2, 7, 1, 3, {16, 64}, 1, 2, 1.0, 120}
                     : Effort{1, o.max_batch_size, 2, 3, 7, 3.0, 4, 3, 10, 2, 6, {32, 128}, 1, 3, 5.0, 600};
  e.max_batch = std::min(e.max_batch, o.max_batch_size);
  e.first_batch = std::min(e.first_batch, e.max_batch);
  if (o.warmup >= 0) e.warmup = e.allreduce_warmup = e.overlap_warmup = e.eval_warmup = o.warmup;
  if (o.repeats > 0) e.repeats = e.allreduce_repeats = e.overlap_steps = e.eval_repeats = o.repeats;
  if (o.worker_timeout_s > 0) e.worker_timeout_s = o.worker_timeout_s;
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

const models::ModelInfo& find_model(const std::string& name) {
  std::string names;
  for (const auto& info : models::model_catalog()) {
    if (info.name == name) return info;
    names += (names.empty() ? "" : ", ") + info.name;
  }
  throw std::invalid_argument("--model: unknown model '" + name + "' (the zoo has: " + names + ")");
}

// The data's description and the input the model sees, resolved as `tula
// train` resolves them (the same image size rule), so the profile times what
// training will run.
std::vector<int64_t> resolve_data(const ProfileOptions& o, predict::DataInfo& info, ModelTarget& target) {
  const bool synthetic = o.dataset.empty() || o.dataset == "synthetic";
  data::SampleShape shape;
  if (synthetic) {
    const auto dims = o.input_shape.empty() ? std::vector<int64_t>{3, 32, 32} : o.input_shape;
    shape = {dims[0], dims[1], dims[2]};
    target.classes = o.classes;
    info.name = "synthetic";
    info.train_samples = o.train_samples > 0 ? o.train_samples : 10000;
    info.test_samples = o.test_samples > 0 ? o.test_samples : std::max<int64_t>(1, info.train_samples / 5);
  } else {
    data::DatasetOptions d;
    d.name = o.dataset;
    d.data_dir = o.data_dir.empty() ? data::default_data_dir(o.dataset) : o.data_dir;
    const auto train = data::open_dataset(d, data::Split::kTrain);
    const auto test = data::open_dataset(d, data::Split::kTest);
    shape = train->shape();
    target.classes = train->num_classes();
    info.name = o.dataset;
    info.train_samples = train->size();
    info.test_samples = test->size();
  }
  const int64_t image = models::input_size(o.model, o.image_size, shape.height, shape.width);
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
// forward time taken as a third of forward+backward at the largest batch.
std::vector<int64_t> evaluation_counts(const std::vector<predict::ComputeSample>& measured, const Effort& e) {
  const auto& last = measured.back();
  const double per_sample = predict::median(last.forward_backward_s) / 3.0 / static_cast<double>(last.batch_per_worker);
  const double runs = 7.0 * (e.eval_warmup + e.eval_repeats);
  const auto n = static_cast<int64_t>(std::clamp(e.eval_budget_s / (runs * std::max(per_sample, 1e-9)), 16.0, 512.0));
  return {n, 2 * n, 4 * n};
}

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
  find_model(o.model);
  const bool synthetic = o.dataset.empty() || o.dataset == "synthetic";
  if (!synthetic && !o.input_shape.empty()) {
    throw std::invalid_argument("--input-shape is for synthetic input; --dataset " + o.dataset +
                                " has its own shape (use --image-size to resize)");
  }
  if (!o.input_shape.empty() && o.input_shape.size() != 3) throw std::invalid_argument("--input-shape must be CxHxW");
  if (o.classes < 1) throw std::invalid_argument("--classes must be at least 1");
  if (o.max_batch_size < 1) throw std::invalid_argument("--max-batch-size must be at least 1");
  if (!o.batch_sizes.empty() && static_cast<int>(o.batch_sizes.size()) < predict::kMinComputePoints) {
    throw std::invalid_argument("--batch-sizes: give at least " + std::to_string(predict::kMinComputePoints) +
                                " distinct sizes (the compute and memory fits need them), or 'auto'");
  }
  for (const int64_t n : o.workers) {
    if (n < 2) throw std::invalid_argument("--workers: each count must be at least 2 (one worker has no allreduce)");
  }
  if (o.bucket_mb <= 0 || o.first_bucket_mb <= 0) throw std::invalid_argument("--bucket-mb and --first-bucket-mb must be positive");
  if (!o.pilot_metrics.empty() && !(o.target_accuracy > 0 && o.target_accuracy <= 1)) {
    throw std::invalid_argument("--pilot-metrics needs --target-accuracy in (0, 1]: the accuracy the pilots count steps to");
  }
}

ResolvedInput resolve_input(const ProfileOptions& o) {
  ResolvedInput r;
  r.target.model = o.model;
  r.target.dropout = o.dropout;
  r.data_shape = resolve_data(o, r.data, r.target);
  return r;
}

ProfileRun run_profile(const ProfileOptions& o, const Log& log, const Log& warn) {
  validate(o);
  const auto start = Clock::now();
  Effort e = effort_for(o);
  ProfileRun run;
  const auto warning = [&](const std::string& text) {
    run.warnings.push_back(text);
    if (warn) {
      warn(text);
    } else if (log) {
      log("warning: " + text);
    }
  };
  const bool budgeted = o.time_budget_s > 0;
  const auto left_s = [&] { return o.time_budget_s - since(start); };
  auto& p = run.profile;
  p.created = now_iso8601();
  p.hardware = describe_cpu_hardware();
  ModelTarget target;
  target.model = o.model;
  target.dropout = o.dropout;
  resolve_data(o, p.data, target);

  const int64_t threads = o.threads > 0 ? o.threads : p.hardware.cores;
  torch::set_num_threads(static_cast<int>(threads));
  const int64_t memory_limit = o.memory_limit_bytes > 0 ? o.memory_limit_bytes : p.hardware.device.memory_bytes / 2;
  distributed::ReducerOptions buckets{static_cast<int64_t>(o.bucket_mb * (1 << 20)),
                               static_cast<int64_t>(o.first_bucket_mb * (1 << 20))};
  p.buckets = {buckets.bucket_bytes, buckets.first_bucket_bytes};

  TrialModel model(target, nullptr, buckets);
  p.model = {o.model, model.parameters(), model.gradient_bytes()};
  if (log) {
    log("profiling " + o.model + " (" + std::to_string(p.model.parameters) + " parameters) on " + p.data.name + " " +
        std::to_string(target.channels) + "x" + std::to_string(target.height) + "x" + std::to_string(target.width) +
        ", " + std::to_string(target.classes) + " classes; " + p.hardware.cpu_model + ", " +
        std::to_string(p.hardware.cores) + " cores, " + std::to_string(threads) + " threads" +
        (o.quick ? " (quick)" : ""));
  }

  if (log && budgeted) {
    log("time budget " + seconds_text(o.time_budget_s) + ": the plan below is cut to fit it, never below the "
        "samples the fits need");
  }

  if (log) log("compute and memory, one worker:");
  ComputeTrialOptions ct;
  ct.batches = o.batch_sizes;
  ct.auto_first = e.first_batch;
  ct.auto_ratio = e.batch_ratio;
  ct.auto_max = std::min(e.max_batch, p.data.train_samples);
  ct.memory_limit_bytes = memory_limit;
  ct.max_step_seconds = e.max_step_s;
  ct.warmup = e.warmup;
  ct.repeats = e.repeats;
  std::vector<int64_t> comm_workers = o.workers.empty() ? default_workers(p.hardware.cores) : o.workers;

  // The anchor: one worker at a mid batch of the grid, timed before and after
  // the grid (anchor.hpp); its first timing also sizes the budget's plan.
  const auto planned = planned_batches(ct, model.has_batch_norm());
  const int64_t anchor_batch = planned.empty() ? 0 : planned[(planned.size() - 1) / 2];
  AnchorOptions anchor_options;
  anchor_options.threshold = o.anchor_threshold;
  data::Batch anchor_input;
  if (anchor_batch > 0) anchor_input = synthetic_batch(target, anchor_batch, 4242);
  double last_anchor_s = 0;
  const auto time_anchor = [&] {
    for (int i = 0; i < anchor_options.warmup; ++i) model.step(anchor_input);
    std::vector<double> t;
    for (int i = 0; i < anchor_options.repeats; ++i) t.push_back(model.step(anchor_input).forward_backward_s);
    return last_anchor_s = predict::median(t);
  };

  ProfilePlan plan;
  plan.batches = planned;
  plan.warmup = ct.warmup;
  plan.repeats = ct.repeats;
  plan.anchor_steps = anchor_options.warmup + anchor_options.repeats;
  plan.max_step_s = o.batch_sizes.empty() ? ct.max_step_seconds : 0;
  plan.workers = comm_workers;
  plan.overlap_batches = nearest_batches(planned, e.overlap_near);
  plan.overlap_steps = e.overlap_warmup + e.overlap_steps;
  plan.evaluation_s = e.eval_budget_s;
  StepEstimate step_estimate;
  std::vector<std::string> budget_cuts;
  double planned_s = 0;
  const auto plan_to_budget = [&] {
    step_estimate = {anchor_batch, last_anchor_s};
    if (budgeted) {
      budget_cuts = fit_to_budget(plan, step_estimate, left_s());
      if (o.batch_sizes.empty()) {
        if (!plan.batches.empty()) ct.auto_max = std::min(ct.auto_max, plan.batches.back());
      } else {
        ct.batches = plan.batches;
      }
      ct.warmup = plan.warmup;
      ct.repeats = plan.repeats;
      comm_workers = plan.workers;
      if (e.overlap_near.size() > plan.overlap_batches.size()) e.overlap_near.resize(plan.overlap_batches.size());
    }
    const auto est = estimate(plan, step_estimate);
    planned_s = since(start) + est.total();
    if (log && budgeted) {
      log("  plan: " + describe(plan) + "; estimated " + seconds_text(est.total()) + " more (compute " +
          seconds_text(est.compute_s) + ", evaluation " + seconds_text(est.evaluation_s) + ", communication " +
          seconds_text(est.communication_s) + "), " + seconds_text(left_s()) + " of the budget left");
      for (const auto& cut : budget_cuts) log("  budget cut: " + cut);
      if (planned_s > o.time_budget_s) {
        log("  the smallest plan the fits allow is estimated past the budget; measuring it anyway");
      }
    }
  };
  if (budgeted) {
    // Past the minimum, a batch whose trial would take the profile over its
    // budget (with what must still follow) ends the grid.
    ct.stop_before = [&](int64_t b) -> std::string {
      const double need = compute_batch_seconds(plan, step_estimate, b) +
                          after_compute_seconds(plan, step_estimate) + plan.anchor_steps * step_estimate.seconds;
      if (need <= left_s()) return "";
      return "the time budget (about " + seconds_text(need) + " still needed, " +
             seconds_text(std::max(0.0, left_s())) + " left)";
    };
  }

  std::vector<ComputeTrialResult> grids;
  AnchoredSteps anchored;
  anchored.time_anchor = time_anchor;
  anchored.measure = [&](int attempt) {
    if (attempt == 0) plan_to_budget();
    if (attempt > 0) {
      // The same batches again, so the two grids are comparable and the one
      // kept spans the same range: a slow stretch must not end the second
      // grid early at the per-step time limit.
      if (log) log("compute and memory, one worker, again:");
      if (!grids.front().compute.empty()) ct.batches = batches_of(grids.front().compute);
    }
    grids.push_back(run_compute_trials(model, target, ct, log));
  };
  anchored.may_remeasure = [&]() -> std::string {
    if (!budgeted) return "";
    double need = plan.anchor_steps * step_estimate.seconds + after_compute_seconds(plan, step_estimate);
    for (const auto& c : grids.front().compute) need += compute_batch_seconds(plan, step_estimate, c.batch_per_worker);
    if (need <= left_s()) return "";
    return "another grid would take the profile past its time budget (about " + seconds_text(need) +
           " still needed, " + seconds_text(std::max(0.0, left_s())) + " left)";
  };
  AnchorReport anchor;
  ComputeTrialResult compute;
  if (anchor_batch > 0) {
    anchor = run_anchored(anchor_batch, anchored, anchor_options, log);
    compute = std::move(grids[static_cast<size_t>(anchor.kept)]);
    if (!anchor.warning.empty()) warning(anchor.warning);
  } else {
    compute = run_compute_trials(model, target, ct, log);
  }
  if (compute.compute.empty()) {
    throw predict::InfeasibleError("not even the smallest batch fits the memory limit of " +
                                   common::format_bytes(static_cast<double>(memory_limit)));
  }
  p.compute = compute.compute;
  p.memory = compute.memory;

  if (log) log("evaluation, one worker:");
  EvaluationTrialOptions et;
  et.sample_counts = evaluation_counts(p.compute, e);
  et.warmup = e.eval_warmup;
  et.repeats = e.eval_repeats;
  p.evaluation = run_evaluation_trials(model, target, et, log);

  if (log) log("communication:");
  CommTrialOptions comm;
  comm.workers = comm_workers;
  comm.master_addr = o.master_addr;
  comm.master_port = o.master_port;
  comm.spec.target = target;
  comm.spec.message_bytes = message_sizes(p.model.gradient_bytes, e.message_ratio);
  comm.spec.allreduce_warmup = e.allreduce_warmup;
  comm.spec.allreduce_repeats = e.allreduce_repeats;
  comm.spec.overlap_batches = nearest_batches(batches_of(p.compute), e.overlap_near);
  comm.spec.overlap_warmup = e.overlap_warmup;
  comm.spec.overlap_steps = e.overlap_steps;
  comm.spec.bucket_bytes = buckets.bucket_bytes;
  comm.spec.first_bucket_bytes = buckets.first_bucket_bytes;
  comm.spec.deadline_s = e.worker_timeout_s;
  comm.spec.rendezvous_timeout_s = std::min(60, e.worker_timeout_s);
  comm.spec.collective_timeout_s = std::min(120, e.worker_timeout_s);
  if (budgeted) {
    comm.stop_before = [&](int64_t n) -> std::string {
      ProfilePlan one = plan;
      one.workers = {n};
      const double need = after_compute_seconds(one, step_estimate) - one.evaluation_s;
      if (need <= left_s()) return "";
      return "the time budget (about " + seconds_text(need) + " needed, " + seconds_text(std::max(0.0, left_s())) +
             " left)";
    };
  }
  auto comm_result = run_comm_trials(comm, log);
  std::vector<std::string> comm_notes;
  if (!allreduce_fits(comm_result.allreduce)) {
    // Sub-millisecond collectives are at the mercy of the scheduler on a busy
    // machine; one more, longer measurement usually recovers the line. The
    // first run's samples stay in measurement.workers_raw.
    comm_notes.push_back("allreduce time did not grow with message size (load from elsewhere on the machine?); "
                         "measured again with twice the repeats and the second measurement used");
    if (log) log("note: " + comm_notes.back());
    if (budgeted && left_s() <= 0) {
      comm_notes.back() += " (past the time budget: the fit needs these samples)";
    }
    CommTrialOptions again = comm;
    again.spec.overlap_batches.clear();
    again.spec.allreduce_warmup += 1;
    again.spec.allreduce_repeats *= 2;
    auto second = run_comm_trials(again, log);
    comm_result.allreduce = std::move(second.allreduce);
    for (auto& doc : second.raw) comm_result.raw.push_back(std::move(doc));
  }
  for (const auto& n : comm_result.notes) comm_notes.push_back(n);
  p.allreduce = comm_result.allreduce;
  p.overlap = comm_result.overlap;
  p.compute.insert(p.compute.end(), comm_result.contention.begin(), comm_result.contention.end());

  std::vector<std::string> pilot_notes;
  if (!o.pilot_metrics.empty()) {
    auto pilots = read_pilot_metrics(o.pilot_metrics, o.target_accuracy);
    p.gradient_noise = std::move(pilots.noise);
    p.pilots = std::move(pilots.pilots);
    if (!p.pilots.empty()) p.target_accuracy = o.target_accuracy;
    pilot_notes = std::move(pilots.notes);
    for (const auto& n : pilot_notes) {
      if (log) log("note: " + n);
    }
  }

  run.measurement = {
      {"tool", "tula profile"},
      {"quick", o.quick},
      {"threads", threads},
      {"warmup", ct.warmup},
      {"repeats", ct.repeats},
      {"memory_limit_bytes", memory_limit},
      {"methods",
       {{"compute", "one worker with all threads; a step as `tula train` runs it with one worker: forward, loss, "
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
        {"allreduce", "Gloo allreduce of n zeros after a barrier, timed on rank 0; workers on loopback"},
        {"overlap", "real data-parallel steps with the bucketed reducer; hidden_fraction is the median of the "
                    "reducer's per-step share of allreduce time before backward ended; step_s = compute + exposed "
                    "communication"}}},
      {"static_memory",
       {{"weights_bytes", model.weight_bytes()},
        {"gradient_buckets_bytes", model.gradient_buffer_bytes()},
        {"optimizer_state_bytes", model.optimizer_state_bytes()}}},
      {"memory_detail", compute.memory_detail},
      {"grid_notes", compute.notes},
      {"communication_notes", comm_notes},
      {"pilot_notes", pilot_notes},
      {"workers_raw", comm_result.raw}};
  for (const auto& n : compute.notes) {
    if (log) log("note: " + n);
  }
  if (anchor_batch > 0) {
    auto& a = run.measurement["anchor"] = anchor.to_json();
    if (anchor.remeasured) {
      a["set_aside_compute"] = compute_samples_json(grids[anchor.kept == 0 ? 1 : 0].compute);
    }
    // Once more after the communication trials: recorded, not acted on (they
    // are not re-measured), so a reader can see whether the machine held
    // still for the rest of the profile.
    const double after = time_anchor();
    a["after_profile_s"] = after;
    if (log) {
      log("anchor after the whole profile: " + seconds_text(after) + " (" +
          percent(disagreement(anchor.end_s(), after)) + " from the one after the kept grid)");
    }
  }

  try {
    run.fitted = predict::fit_profile(p);
  } catch (const std::runtime_error& err) {  // FitError or ProfileError
    run.fit_error = err.what();
  }
  if (!run.fitted && (!p.gradient_noise.empty() || !p.pilots.empty())) {
    // The stated fallback: pilot metrics that cannot support a statistical
    // model must not cost the rest of the profile. Without them the profile
    // predicts time per epoch instead of time to accuracy.
    auto without = p;
    without.gradient_noise.clear();
    without.pilots.clear();
    without.target_accuracy = 0;
    try {
      run.fitted = predict::fit_profile(without);
      const std::string note = "pilot metrics left out, they do not support a statistical model: " + run.fit_error;
      if (log) log("note: " + note);
      run.measurement["pilot_notes"].push_back(note);
      run.measurement["dropped_gradient_noise_samples"] = p.gradient_noise.size();
      p = std::move(without);
      run.fit_error.clear();
    } catch (const std::runtime_error&) {
      // The measurements themselves do not fit: report the original error.
    }
  }
  if (run.fitted) p.fitted = predict::to_json(*run.fitted);
  const double wall = since(start);
  run.measurement["wall_s"] = wall;
  if (budgeted) {
    run.measurement["time_budget"] = {{"budget_s", o.time_budget_s},
                                      {"wall_s", wall},
                                      {"planned_s", planned_s},
                                      {"within", wall <= o.time_budget_s},
                                      {"cuts", budget_cuts}};
    if (wall <= o.time_budget_s) {
      if (log) log("took " + seconds_text(wall) + " of the " + seconds_text(o.time_budget_s) + " time budget");
    } else {
      warning("took " + seconds_text(wall) + ", " + seconds_text(wall - o.time_budget_s) + " over the " +
              seconds_text(o.time_budget_s) + " time budget (planned " + seconds_text(planned_s) +
              "; the fits' minimum samples are measured whatever the budget)");
    }
  }
  run.measurement["warnings"] = run.warnings;
  return run;
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
