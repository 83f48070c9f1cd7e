#include "train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "data/loader.hpp"
#include "data/sampler.hpp"
#include "distributed/reducer.hpp"
#include "optim/lr_rules.hpp"
#include "optim/make_optimizer.hpp"
#include "train/checkpoint.hpp"
#include "train/evaluate.hpp"
#include "train/metrics.hpp"
#include "train/progress.hpp"

namespace tula::train {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

uint64_t mix(uint64_t a, uint64_t b) {
  // splitmix64 of a combined key: distinct, well-spread seeds per (run, step, rank).
  uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E5CDULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void sync_device(const torch::Device& device) {
#ifdef TULA_HAVE_CUDA
  if (device.is_cuda()) torch::cuda::synchronize();
#else
  (void)device;
#endif
}

std::shared_ptr<data::Dataset> open_split(const TrainOptions& o, data::Split split) {
  data::DatasetOptions d;
  d.name = o.dataset;
  d.data_dir = o.data_dir.empty() ? data::default_data_dir(o.dataset) : o.data_dir;
  d.synthetic_size = split == data::Split::kTrain ? o.synthetic_size : std::max<int64_t>(1, o.synthetic_size / 5);
  d.synthetic_shape = {o.synthetic_channels, o.synthetic_height, o.synthetic_width};
  d.synthetic_classes = o.synthetic_classes;
  d.seed = o.seed + (split == data::Split::kTrain ? 0 : 1);
  return data::open_dataset(d, split);
}

// The state of one worker's run, set up once and then driven epoch by epoch.
class Run {
 public:
  explicit Run(const TrainOptions& o) : o_(o), device_(o.device == "cuda" ? torch::kCUDA : torch::kCPU) {}
  TrainSummary execute();

 private:
  void set_up();
  void make_optimizer();
  // The global and per-worker batch of an epoch (the batch schedule's or --batch-size's).
  int64_t global_batch_at(int64_t epoch) const;
  int64_t steps_in_epoch(int64_t per_worker_batch) const;
  // Moves the learning-rate schedule to global batch B from this step on.
  void change_batch(int64_t global_batch, const char* why);
  // Test-split evaluation on every rank; notes whether the target was reached.
  EvalResult evaluate_now();
  bool run_epoch(int64_t epoch, int64_t start_step);  // false when max_steps reached
  void checkpoint(int64_t epoch, int64_t step_in_epoch);
  nlohmann::json tensor_norms() const;

  const TrainOptions& o_;
  torch::Device device_;
  distributed::RendezvousInfo rdv_;
  std::unique_ptr<distributed::Communicator> comm_;
  std::shared_ptr<data::Dataset> train_set_, test_set_;
  data::TransformOptions train_transform_, test_transform_;
  std::shared_ptr<models::Net> model_;
  std::vector<std::string> param_names_;
  std::vector<torch::Tensor> params_, buffers_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  std::unique_ptr<distributed::GradientReducer> reducer_;
  std::unique_ptr<data::DistributedSampler> sampler_;
  std::unique_ptr<MetricsWriter> metrics_;
  std::unique_ptr<Progress> progress_;
  optim::ScheduleOptions schedule_;  // at the reference batch, before scaling
  optim::LrScaling scaling_;
  optim::BatchSchedule batch_schedule_;
  optim::LrTransition lr_;
  int64_t bad_steps_ = 0;  // in a row, with non-finite gradients
  bool target_reached_ = false;
  nlohmann::json input_;  // the model's input, recorded in checkpoints
  double train_seconds_ = 0;  // optimizer steps only, evaluation excluded
  int64_t steps_per_epoch_ = 0;
  int64_t global_step_ = 0;
  int64_t global_batch_ = 0;
  TrainSummary summary_;
  double timed_samples_ = 0, timed_seconds_ = 0;
};

void Run::set_up() {
  validate(o_);
  rdv_ = distributed::rendezvous_from_environment();
  const auto cores = std::max(1u, std::thread::hardware_concurrency());
  const int64_t threads = o_.threads > 0 ? o_.threads : std::max<int64_t>(1, cores / rdv_.local_world_size);
  torch::set_num_threads(static_cast<int>(threads));

  train_set_ = open_split(o_, data::Split::kTrain);
  test_set_ = open_split(o_, data::Split::kTest);
  if (!o_.batch_schedule.empty()) batch_schedule_ = optim::BatchSchedule::parse(o_.batch_schedule);
  for (int64_t epoch = 0; epoch < o_.epochs; ++epoch) {
    const int64_t global = global_batch_at(epoch);  // throws if it does not divide across the workers
    if (global / o_.accumulation_steps > train_set_->size()) {
      throw std::invalid_argument("global batch " + std::to_string(global) + " (epoch " + std::to_string(epoch + 1) +
                                  ") exceeds the " + std::to_string(train_set_->size()) + " training samples of " +
                                  train_set_->name());
    }
  }
  global_batch_ = global_batch_at(0);

  const auto shape = train_set_->shape();
  const int64_t image_size = models::input_size(o_.model, o_.image_size, shape.height, shape.width);
  torch::manual_seed(o_.seed);  // the same initial weights on every worker, before the broadcast too
  models::ModelOptions model_options{shape.channels, train_set_->num_classes(), image_size};
  input_ = {{"channels", shape.channels}, {"height", shape.height}, {"width", shape.width},
            {"classes", train_set_->num_classes()}, {"image_size", image_size},
            {"synthetic_size", o_.synthetic_size}};
  model_options.dropout = o_.dropout;
  model_ = models::make_model(o_.model, model_options);
  model_->to(device_);

  const bool real_data = o_.dataset != "synthetic";
  train_transform_.train = true;
  train_transform_.image_size = image_size == shape.height && image_size == shape.width ? 0 : image_size;
  if (real_data) {
    train_transform_.mean = train_set_->channel_mean();
    train_transform_.std = train_set_->channel_std();
  }
  if (real_data && o_.augment) {
    train_transform_.crop_padding = std::max<int64_t>(2, shape.height / 8);  // 4 px at 32, 3 at 28
    train_transform_.horizontal_flip = true;
  }
  test_transform_ = train_transform_;
  test_transform_.train = false;

  if (rdv_.world_size > 1) {
    distributed::CommunicatorOptions c;
    c.rendezvous_timeout = std::chrono::seconds(o_.rendezvous_timeout_s);
    c.collective_timeout = std::chrono::seconds(o_.collective_timeout_s);
    c.backend = o_.backend;
    c.use_cuda = device_.is_cuda();
    comm_ = distributed::Communicator::connect(rdv_, c);
  }
  for (const auto& named : model_->named_parameters()) {
    param_names_.push_back(named.key());
    params_.push_back(named.value());
  }
  for (const auto& b : model_->buffers()) buffers_.push_back(b);
  if (comm_) {
    auto state = params_;
    state.insert(state.end(), buffers_.begin(), buffers_.end());
    distributed::broadcast_from_rank0(*comm_, state);
  }

  make_optimizer();

  distributed::ReducerOptions r;
  r.bucket_bytes = static_cast<int64_t>(o_.bucket_mb * 1024 * 1024);
  r.first_bucket_bytes = static_cast<int64_t>(o_.first_bucket_mb * 1024 * 1024);
  reducer_ = std::make_unique<distributed::GradientReducer>(params_, comm_.get(), r);

  data::SamplerOptions s;
  s.dataset_size = train_set_->size();
  s.rank = rdv_.rank;
  s.world_size = rdv_.world_size;
  s.seed = o_.seed;
  sampler_ = std::make_unique<data::DistributedSampler>(s);
  steps_per_epoch_ = steps_in_epoch(global_batch_ / (rdv_.world_size * o_.accumulation_steps));

  schedule_.kind = o_.schedule;
  schedule_.base_lr = o_.lr;
  schedule_.warmup_epochs = o_.warmup_epochs;
  schedule_.total_epochs = static_cast<double>(o_.epochs);
  scaling_ = {o_.lr_scaling, o_.reference_batch, o_.legw};
  lr_.to = lr_.from = optim::scaled_schedule(schedule_, scaling_, global_batch_);

  if (rdv_.rank == 0) {
    metrics_ = std::make_unique<MetricsWriter>(o_.metrics_path, o_.resume);
    progress_ = std::make_unique<Progress>(o_.progress, o_.epochs);
  } else {
    metrics_ = std::make_unique<MetricsWriter>("", false);
    progress_ = std::make_unique<Progress>("none", o_.epochs);
  }
}

void Run::make_optimizer() {
  std::vector<optim::ParamRef> refs;
  for (size_t i = 0; i < params_.size(); ++i) refs.push_back({param_names_[i], params_[i], params_[i].dim() <= 1});
  optim::OptimizerSpec spec;
  spec.name = o_.optimizer;
  spec.lr = o_.lr;
  spec.momentum = o_.momentum;
  spec.weight_decay = o_.weight_decay;
  spec.nesterov = o_.nesterov;
  spec.lars_trust_coefficient = o_.lars_trust_coefficient;
  spec.lamb_beta1 = o_.lamb_beta1;
  spec.lamb_beta2 = o_.lamb_beta2;
  spec.lamb_eps = o_.lamb_eps;
  spec.ags.reference_batch = o_.reference_batch;
  spec.ags.s_min = o_.ags_min;
  spec.ags.s_max = o_.ags_max;
  spec.ags.bounded = !o_.ags_unbounded;
  spec.ags.trust_exponent = o_.ags_trust_exponent;
  for (const auto& off : split_list(o_.ags_ablate)) {
    if (off == "noise") spec.ags.use_noise = false;
    if (off == "trust") spec.ags.use_trust = false;
    if (off == "trend") spec.ags.use_trend = false;
  }
  optimizer_ = optim::make_optimizer(std::move(refs), spec);
}

int64_t Run::global_batch_at(int64_t epoch) const {
  const int64_t fixed = o_.batch_size * o_.accumulation_steps * rdv_.world_size;
  const int64_t global = batch_schedule_.global_batch_at(epoch, fixed);
  const int64_t per_step_workers = rdv_.world_size * o_.accumulation_steps;
  if (global % per_step_workers != 0) {
    throw std::invalid_argument("batch schedule: global batch " + std::to_string(global) + " at epoch " +
                                std::to_string(epoch + 1) + " does not divide across " +
                                std::to_string(rdv_.world_size) + " workers x " +
                                std::to_string(o_.accumulation_steps) + " accumulation steps");
  }
  return global;
}

int64_t Run::steps_in_epoch(int64_t per_worker_batch) const {
  const int64_t micro_per_rank = (sampler_->per_rank() + per_worker_batch - 1) / per_worker_batch;
  return (micro_per_rank + o_.accumulation_steps - 1) / o_.accumulation_steps;
}

void Run::change_batch(int64_t global_batch, const char* why) {
  lr_.from = lr_.to;
  lr_.to = optim::scaled_schedule(schedule_, scaling_, global_batch);
  lr_.start_step = global_step_;
  lr_.window = o_.lr_transition_steps;
  if (rdv_.rank == 0) {
    spdlog::info("{}: global batch {} -> {}; learning rate moves to the new batch's over {} steps", why,
                 global_batch_, global_batch, lr_.window);
  }
  metrics_->write({{"type", "resize"}, {"step", global_step_}, {"from_global_batch", global_batch_},
                   {"to_global_batch", global_batch}, {"lr_transition_steps", lr_.window}, {"reason", why}});
  global_batch_ = global_batch;
}

EvalResult Run::evaluate_now() {
  if (comm_ && !buffers_.empty()) distributed::broadcast_from_rank0(*comm_, buffers_);
  auto eval = evaluate(*model_, test_set_, test_transform_, o_.eval_batch_size, rdv_.rank, rdv_.world_size,
                       comm_.get(), device_);
  if (o_.target_accuracy > 0 && eval.accuracy >= o_.target_accuracy && !target_reached_) {
    target_reached_ = true;
    if (rdv_.rank == 0) {
      spdlog::info("test accuracy {:.2f}% reached the target {:.2f}% at step {}", 100 * eval.accuracy,
                   100 * o_.target_accuracy, global_step_);
    }
  }
  return eval;
}

nlohmann::json Run::tensor_norms() const {
  nlohmann::json rows = nlohmann::json::array();
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    rows.push_back({{"name", param_names_[i]},
                    {"weight_norm", params_[i].norm().item<double>()},
                    {"grad_norm", params_[i].grad().defined() ? params_[i].grad().norm().item<double>() : 0.0}});
  }
  return rows;
}

void Run::checkpoint(int64_t epoch, int64_t step_in_epoch) {
  if (o_.checkpoint_dir.empty() || rdv_.rank != 0) return;
  CheckpointState state;
  state.epoch = epoch;
  state.step_in_epoch = step_in_epoch;
  state.global_step = global_step_;
  state.global_batch = global_batch_;
  state.world_size = rdv_.world_size;
  state.seed = o_.seed;
  state.model = o_.model;
  state.dataset = o_.dataset;
  state.input = input_;
  save_checkpoint(o_.checkpoint_dir, *model_, *optimizer_, state, o_.keep_checkpoints);
}

bool Run::run_epoch(int64_t epoch, int64_t start_step) {
  const auto epoch_start = Clock::now();
  if (const int64_t global = global_batch_at(epoch); global != global_batch_) change_batch(global, "batch schedule");
  const int64_t batch_size = global_batch_ / (rdv_.world_size * o_.accumulation_steps);
  steps_per_epoch_ = steps_in_epoch(batch_size);
  data::LoaderOptions lo;
  lo.batch_size = batch_size;
  lo.prefetch = o_.prefetch;
  lo.start_batch = start_step * o_.accumulation_steps;
  lo.seed = mix(mix(o_.seed, static_cast<uint64_t>(epoch)), static_cast<uint64_t>(rdv_.rank));
  lo.transform = train_transform_;
  data::PrefetchLoader loader(train_set_, sampler_->indices(epoch), lo);
  progress_->start_epoch(epoch, steps_per_epoch_);
  model_->train();

  int64_t micro_done = lo.start_batch;
  double loss_sum = 0.0, loss_count = 0.0;
  for (int64_t step = start_step; step < steps_per_epoch_; ++step) {
    if (o_.max_steps > 0 && global_step_ >= o_.max_steps) return false;
    const auto iter_start = Clock::now();
    torch::manual_seed(mix(mix(o_.seed, static_cast<uint64_t>(global_step_)), 1000003ULL + rdv_.rank));
    const double lr = lr_.learning_rate(global_step_, epoch + static_cast<double>(step) / steps_per_epoch_);
    optimizer_->set_lr(lr);

    const int64_t micro_count = std::min(o_.accumulation_steps, loader.num_batches() - micro_done);
    double data_wait = 0.0, compute = 0.0, step_loss = 0.0, buffer_comm = 0.0;
    int64_t local_samples = 0;
    distributed::ReduceStats reduce;
    reducer_->zero_grad();
    for (int64_t micro = 0; micro < micro_count; ++micro) {
      auto batch = loader.next();
      data_wait += loader.last_wait_seconds();
      if (!batch) throw std::logic_error("data loader ended before the epoch's last step");
      ++micro_done;
      if (comm_ && o_.broadcast_buffers && micro == 0 && !buffers_.empty()) {
        const auto t = Clock::now();
        distributed::broadcast_from_rank0(*comm_, buffers_);
        buffer_comm += since(t);
      }
      const auto t0 = Clock::now();
      auto images = batch->images.to(device_);
      auto labels = batch->labels.to(device_);
      local_samples += labels.size(0);
      const bool last_micro = micro == micro_count - 1;
      reducer_->begin_backward(last_micro);
      auto loss = torch::nn::functional::cross_entropy(model_->forward(images), labels);
      (loss / static_cast<double>(micro_count)).backward();
      step_loss += loss.item<double>() / micro_count;
      sync_device(device_);
      compute += since(t0);
      if (last_micro) reduce = reducer_->finish_backward();
    }

    optim::StepStats stats;
    stats.step = global_step_;
    stats.local_batch = local_samples;
    stats.global_batch = local_samples * rdv_.world_size;
    stats.world_size = rdv_.world_size;
    stats.local_grad_sq = reduce.local_grad_sq;
    stats.global_grad_sq = reduce.global_grad_sq;
    stats.local_grad_sq_per_tensor = reduce.local_grad_sq_per_tensor;
    stats.global_grad_sq_per_tensor = reduce.global_grad_sq_per_tensor;
    // Every worker sees the same allreduced norm, so all skip together.
    const bool finite = std::isfinite(stats.global_grad_sq) && std::isfinite(step_loss);
    if (!finite) {
      ++bad_steps_;
      if (rdv_.rank == 0) {
        spdlog::warn("step {}: non-finite gradient or loss; step skipped ({} in a row, stopping at {})",
                     global_step_ + 1, bad_steps_, o_.max_bad_steps);
      }
      if (bad_steps_ >= o_.max_bad_steps) {
        throw std::runtime_error("stopping: non-finite gradients in " + std::to_string(bad_steps_) +
                                 " steps in a row (at step " + std::to_string(global_step_ + 1) +
                                 "); lower --lr or check the data");
      }
    } else {
      bad_steps_ = 0;
    }
    const auto t_opt = Clock::now();
    if (finite) optimizer_->step(stats);
    sync_device(device_);
    const double optimizer_seconds = since(t_opt);
    const double iter_seconds = since(iter_start);
    train_seconds_ += iter_seconds;
    ++global_step_;
    loss_sum += step_loss;
    loss_count += 1;

    const double samples_per_s = stats.global_batch / iter_seconds;
    if (global_step_ > 1) {  // the first step pays one-time costs (allocation, thread start)
      timed_samples_ += stats.global_batch;
      timed_seconds_ += iter_seconds;
    }
    nlohmann::json record = {
        {"type", "iter"}, {"epoch", epoch}, {"step", global_step_}, {"step_in_epoch", step + 1},
        {"global_batch", stats.global_batch}, {"workers", rdv_.world_size}, {"loss", step_loss}, {"lr", lr},
        {"data_wait_s", data_wait}, {"compute_s", compute}, {"comm_exposed_s", reduce.exposed_comm_seconds + buffer_comm},
        {"comm_busy_s", reduce.comm_busy_seconds}, {"comm_hidden_fraction", reduce.hidden_fraction},
        {"optimizer_s", optimizer_seconds}, {"iter_s", iter_seconds}, {"samples_per_s", samples_per_s},
        {"local_grad_sq", stats.local_grad_sq}, {"global_grad_sq", stats.global_grad_sq},
        {"peak_rss_bytes", peak_rss_bytes()}};
    if (!finite) record["skipped"] = true;
    if (auto report = optimizer_->report(); finite && report.is_object()) record.update(report);
    metrics_->write(record);
    if (o_.tensor_stats_every > 0 && global_step_ % o_.tensor_stats_every == 0 && metrics_->enabled()) {
      metrics_->write({{"type", "tensors"}, {"step", global_step_}, {"tensors", tensor_norms()}});
    }
    progress_->update(step + 1, step_loss, samples_per_s);
    if (o_.checkpoint_every > 0 && global_step_ % o_.checkpoint_every == 0) checkpoint(epoch, step + 1);
    if (o_.evaluate && o_.eval_every > 0 && global_step_ % o_.eval_every == 0 && step + 1 < steps_per_epoch_) {
      const auto eval = evaluate_now();
      metrics_->write({{"type", "eval"}, {"epoch", epoch}, {"step", global_step_}, {"test_loss", eval.loss},
                       {"test_accuracy", eval.accuracy}, {"eval_s", eval.seconds}, {"train_s", train_seconds_}});
      if (target_reached_) {
        summary_.final_test_accuracy = eval.accuracy;
        return false;
      }
    }
  }

  const double train_seconds = since(epoch_start);
  auto loss_totals = torch::tensor({loss_sum, loss_count}, torch::kDouble);
  if (comm_) comm_->allreduce(loss_totals);
  summary_.final_train_loss = loss_totals[0].item<double>() / std::max(1.0, loss_totals[1].item<double>());
  nlohmann::json record = {{"type", "epoch"}, {"epoch", epoch}, {"step", global_step_},
                           {"global_batch", global_batch_}, {"workers", rdv_.world_size},
                           {"train_loss", summary_.final_train_loss}, {"epoch_s", train_seconds},
                           {"lr", optimizer_->lr()}, {"peak_rss_bytes", peak_rss_bytes()}};
  std::string line = "epoch " + std::to_string(epoch + 1) + ": train loss " + std::to_string(summary_.final_train_loss);
  if (o_.evaluate) {
    const auto eval = evaluate_now();
    summary_.final_test_accuracy = eval.accuracy;
    record["test_loss"] = eval.loss;
    record["test_accuracy"] = eval.accuracy;
    record["eval_s"] = eval.seconds;
    record["train_s"] = train_seconds_;
    line += ", test accuracy " + std::to_string(100.0 * eval.accuracy).substr(0, 5) + "%";
  }
  metrics_->write(record);
  progress_->end_epoch(line);
  ++summary_.epochs_completed;
  checkpoint(epoch + 1, 0);
  return !target_reached_;
}

TrainSummary Run::execute() {
  const auto start = Clock::now();
  set_up();
  int64_t first_epoch = 0, start_step = 0;
  if (o_.resume) {
    if (auto state = load_checkpoint(o_.checkpoint_dir, *model_, *optimizer_)) {
      if (state->model != o_.model || state->dataset != o_.dataset) {
        throw std::runtime_error("checkpoint in " + o_.checkpoint_dir + " is for " + state->model + " on " +
                                 state->dataset + ", not " + o_.model + " on " + o_.dataset);
      }
      first_epoch = state->epoch;
      global_step_ = state->global_step;
      // Same global batch: continue exactly where it stopped. Otherwise keep the
      // number of samples seen in the epoch and continue at the step that reaches it.
      const int64_t batch_now = global_batch_at(first_epoch);
      start_step = state->global_batch == batch_now ? state->step_in_epoch
                                                    : state->step_in_epoch * state->global_batch / batch_now;
      if (state->global_batch != global_batch_ && state->global_batch > 0) {
        // Resized across a restart (other worker count or batch): the rate
        // moves from the checkpoint's batch to this run's over the window.
        lr_.to = optim::scaled_schedule(schedule_, scaling_, state->global_batch);
        global_batch_ = state->global_batch;
      }
      if (batch_now != global_batch_) change_batch(batch_now, "resumed at another size");
      if (rdv_.rank == 0) {
        spdlog::info("resuming from {} at epoch {} step {} (global step {})", checkpoint_path(o_.checkpoint_dir),
                     first_epoch + 1, start_step, global_step_);
      }
    } else if (rdv_.rank == 0) {
      spdlog::info("no checkpoint in {}; starting from scratch", o_.checkpoint_dir);
    }
  }
  if (rdv_.rank == 0) {
    metrics_->write({{"type", "start"}, {"model", o_.model}, {"dataset", o_.dataset},
                     {"parameters", models::parameter_count(*model_)}, {"workers", rdv_.world_size},
                     {"batch_size", o_.batch_size}, {"accumulation_steps", o_.accumulation_steps},
                     {"global_batch", global_batch_}, {"steps_per_epoch", steps_per_epoch_},
                     {"optimizer", optimizer_->name()}, {"lr_scaling", o_.lr_scaling},
                     {"reference_batch", o_.reference_batch}, {"batch_schedule", o_.batch_schedule},
                     {"threads", torch::get_num_threads()}, {"backend", comm_ ? comm_->backend() : "none"},
                     {"rendezvous", rdv_.source}, {"train_samples", train_set_->size()}});
  }
  for (int64_t epoch = first_epoch; epoch < o_.epochs; ++epoch) {
    if (!run_epoch(epoch, epoch == first_epoch ? start_step : 0)) break;
  }
  summary_.steps = global_step_;
  summary_.samples_per_second = timed_seconds_ > 0 ? timed_samples_ / timed_seconds_ : 0.0;
  summary_.wall_seconds = since(start);
  if (comm_) comm_->barrier();  // nobody tears down the process group while another still reduces
  return summary_;
}

}  // namespace

TrainSummary run_training(const TrainOptions& options) { return Run(options).execute(); }

}  // namespace tula::train
