#include "train/trainer.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <iterator>
#include <string>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "common/cores.hpp"
#include "common/engine_names.hpp"
#include "common/gpu_mapping.hpp"
#include "common/math_library.hpp"
#include "common/stopwatch.hpp"
#include "data/held_out.hpp"
#include "data/image_folder.hpp"
#include "data/loader.hpp"
#include "data/rng.hpp"
#include "data/sampler.hpp"
#include "models/script_model.hpp"
#include "optim/lr_rules.hpp"
#include "train/checkpoint.hpp"
#include "train/data_sets.hpp"
#include "train/device_input.hpp"
#include "train/evaluate.hpp"
#include "records/metrics_file.hpp"
#include "train/metrics.hpp"
#include "train/model_export.hpp"
#include "train/normalization.hpp"
#include "train/progress.hpp"
#include "train/resume_position.hpp"
#include "train/train_step.hpp"
#include "train/weight_average.hpp"

namespace tula::train {
namespace {

std::string signal_name(int sig) {
  if (sig == SIGTERM) return "SIGTERM";
  if (sig == SIGINT) return "SIGINT";
  return fmt::format("signal {}", sig);
}

}  // namespace

nlohmann::json TrainSummary::to_json() const {
  nlohmann::json j = {{"steps", steps}, {"epochs", epochs_completed}};
  if (train_loss) j["train_loss"] = *train_loss;
  if (test_accuracy) j["test_accuracy"] = *test_accuracy;
  j["samples_per_s"] = samples_per_second;
  j["wall_s"] = wall_seconds;
  if (stopped_by_signal) j["stopped_by_signal"] = signal_name(*stopped_by_signal);
  return j;
}

namespace {

using common::Clock;
using common::since;

// ---------------------------------------------------------------------------
// Stopping on a signal. The handler only sets a flag; the training loop reads
// it at each step boundary, and the workers agree on it there.

// The first SIGTERM or SIGINT received once training runs; 0 while none came.
std::atomic<int> g_stop_signal{0};
// False while the run sets up: then a signal ends the process at once, as
// without a handler, since the rendezvous or the first broadcast may wait
// long for a peer that is going away too.
std::atomic<bool> g_stop_at_step{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "the signal handler may only touch lock-free atomics");

constexpr int kStopSignals[] = {SIGTERM, SIGINT};

extern "C" void tula_train_on_stop_signal(int sig) {
  if (!g_stop_at_step.load()) {
    // Installed with SA_RESETHAND: the default action is back, and the
    // signal raised again (blocked until this handler returns) ends the process.
    const int saved_errno = errno;
    raise(sig);
    errno = saved_errno;
    return;
  }
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, sig);
}

// Handlers for SIGTERM and SIGINT for one run, the previous dispositions
// restored afterwards. SA_RESETHAND: a second signal of the same kind meets
// the default action and ends the process at once (a second Ctrl-C). A signal
// ignored when the run started (nohup) stays ignored.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    g_stop_at_step = false;
    struct sigaction action {};
    action.sa_handler = tula_train_on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    for (size_t i = 0; i < std::size(kStopSignals); ++i) {
      sigaction(kStopSignals[i], nullptr, &saved_[i]);
      installed_[i] = saved_[i].sa_handler != SIG_IGN && sigaction(kStopSignals[i], &action, nullptr) == 0;
    }
  }
  ~StopSignals() {
    g_stop_at_step = false;
    for (size_t i = 0; i < std::size(kStopSignals); ++i) {
      if (installed_[i]) sigaction(kStopSignals[i], &saved_[i], nullptr);
    }
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Set-up is over: from now on a signal stops the run at a step boundary.
  void stop_at_steps() { g_stop_at_step = true; }

 private:
  struct sigaction saved_[std::size(kStopSignals)] {};
  bool installed_[std::size(kStopSignals)] = {};
};

// A worker's vote in the per-step agreement, summed over workers: SIGTERM
// counts in the low bits, SIGINT above them, so the sum says which signals
// any worker got (exact in a double for up to 2^20 workers).
constexpr double kSigintVote = 1 << 20;

double stop_vote(int sig) { return sig == SIGTERM ? 1.0 : sig == SIGINT ? kSigintVote : 0.0; }

// The signal every worker stops on, from the summed votes: SIGTERM if any
// worker got one, else SIGINT; 0 when none did.
int agreed_signal(double votes) {
  if (votes < 0.5) return 0;
  return std::fmod(votes, kSigintVote) >= 0.5 ? SIGTERM : SIGINT;
}

// Once per worker process: writing to a peer's closed socket must fail with
// EPIPE (and surface as a c10d error naming the peer), not kill us silently.
void ignore_sigpipe() {
  static const bool done = [] {
    signal(SIGPIPE, SIG_IGN);
    return true;
  }();
  (void)done;
}

std::shared_ptr<data::Dataset> open_split(const DataOptions& o, const NetworkOptions& model, uint64_t seed,
                                          data::Split split, int64_t local_workers) {
  return data::open_dataset(dataset_options(o, model.name, seed, split, local_workers), split);
}

// What the start record says of an image folder's files: where they are and,
// for a folder split here, how (so the split can be drawn again).
nlohmann::json image_folder_source(const data::Dataset& train_set, const DataOptions& o) {
  const auto* folder = dynamic_cast<const data::ImageFolderDataset*>(&train_set);
  if (folder == nullptr) return nullptr;
  const auto& listing = folder->listing();
  nlohmann::json source = {{"root", listing.root},
                           {"classes", listing.classes.size()},
                           {"channels", train_set.shape().channels},
                           {"image_size", train_set.shape().height},
                           {"eval_crop", o.eval_crop},
                           {"cache_decoded", o.cache_decoded},
                           {"decode_threads", folder->decode_threads()},
                           {"on_bad_image", data::on_bad_image_name(folder->on_bad_image())}};
  source["layout"] = listing.held_out ? "one folder, test split held out" : "train/ and val/";
  if (listing.held_out) {
    source["held_out_fraction"] = listing.held_out_fraction;
    source["split_seed"] = listing.split_seed;
  }
  return source;
}

// The epoch's next micro-batch, through the device input. Ahead (CUDA): the
// batch after it is staged, its copy issued, before this one is handed over,
// so it travels while this one computes. The wait counts the loader's waits
// and the taking (on the CPU, a batch of bytes is converted then).
FetchedBatch next_on_device(data::PrefetchLoader& loader, DeviceInput& input, bool ahead) {
  double wait_s = 0.0;
  const auto pull = [&] {
    auto batch = loader.next();
    if (!batch) throw std::logic_error("data loader ended before the epoch's last step");
    wait_s += loader.last_wait_seconds();
    input.stage(std::move(*batch));
  };
  if (!input.staged()) pull();
  const auto take_start = Clock::now();
  FetchedBatch fetched{input.take(), 0.0};
  wait_s += since(take_start);
  if (ahead && loader.remaining() > 0) pull();
  fetched.wait_s = wait_s;
  return fetched;
}

// The device this worker trains on: with --device cuda, the GPU of its local
// rank (as torchrun's LOCAL_RANK assigns them).
torch::Device training_device(const ExecutionOptions& o, const distributed::RendezvousInfo& rdv) {
  if (o.device != "cuda") return torch::Device(torch::kCPU);
#ifdef TULA_HAVE_CUDA
  if (!torch::cuda::is_available()) throw std::runtime_error("--device cuda: no CUDA device is visible to this process");
  // The runtime numbers the GPUs CUDA_VISIBLE_DEVICES leaves 0..n-1.
  const auto count = static_cast<int>(torch::cuda::device_count());
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(common::gpu_of_local_rank(rdv.local_rank, count)));
#else
  (void)rdv;
  throw std::runtime_error("--device cuda: this tula was built against a LibTorch without CUDA; "
                           "rebuild with CMAKE_PREFIX_PATH pointing at a CUDA LibTorch");
#endif
}

// Sums of the training loss over an epoch's steps, averaged over workers at
// the epoch's end (or where the run stops inside it).
struct LossTotals {
  double sum = 0.0;
  double count = 0.0;
};

// The state of one worker's run, set up once and then driven epoch by epoch.
// The data a run reads: its splits, how each is transformed, and what the
// records say of them.
struct RunData {
  std::shared_ptr<data::Dataset> train_set, test_set;
  std::shared_ptr<data::Dataset> final_test_set;  // --final-test with a validation split: the test split
  data::TransformOptions train_transform, test_transform;
  int64_t image_size = 0;  // what the model sees (the data's size, or resized)
  nlohmann::json input;    // the model's input, recorded in checkpoints
  nlohmann::json source;   // an image folder's root and split, for the start record
  // Image folders that normalize as they decode (the transform then does not).
  std::vector<std::shared_ptr<data::ImageFolderDataset>> decoding_sets;
  Normalization normalization;  // what the images are normalized with, wherever it is done
  // How training batches travel: as floats the loader's transform finished,
  // or as bytes it only cropped and flipped, converted by device_input.
  InputDtype input_dtype = InputDtype::kFloat32;
  DeviceInputOptions device_input;
};

// The learning rate's and the batch's schedules.
struct RunSchedule {
  optim::ScheduleOptions options;  // at the reference batch, before scaling
  optim::BatchSchedule batches;
  optim::LrTransition lr;
};

// The seconds the summary's throughput counts.
struct RunTimes {
  double train_seconds = 0;  // optimizer steps only, evaluation excluded
  double timed_samples = 0, timed_seconds = 0;
};

class Run {
 public:
  explicit Run(const TrainOptions& o) : o_(o), device_(torch::kCPU) {}
  TrainSummary execute();

 private:
  void set_up();
  void set_up_data();
  void set_up_model();
  // Rank 0 at the end: the trained TorchScript model to --export.
  void export_model();
  // Image folders: undecodable files so far, over all workers (none for other data).
  std::optional<int64_t> bad_images();
  void resume();
  // The global batch of an epoch (the batch schedule's or the per-worker batch's).
  int64_t global_batch_at(int64_t epoch) const;
  int64_t steps_in_epoch(int64_t per_worker_batch) const;
  // Moves the learning-rate schedule to global batch B from this step on.
  void change_batch(int64_t global_batch, const char* why);
  // Evaluation (validation or test split) on every rank; notes whether the target was reached.
  EvalResult evaluate_now();
  // `set` evaluated on every rank with rank 0's buffers (batch-norm statistics), so all ranks score one model.
  EvalResult evaluate_on(const std::shared_ptr<data::Dataset>& set);
  // With --final-test: the test split once, after a run that ended by itself.
  void evaluate_final_test();
  // An evaluation as the metrics records carry it.
  records::Evaluation as_record(const EvalResult& e) const { return {e.loss, e.accuracy, e.seconds, times_.train_seconds}; }
  bool run_epoch(int64_t epoch, int64_t start_step);  // false: the run stops here
  data::LoaderOptions epoch_loader_options(int64_t epoch, int64_t start_step, int64_t batch_size) const;
  // After step `step_in_epoch` (of the run: `global_step`): a stop signal,
  // the checkpoint and evaluation due there; false: the run stops here.
  bool after_step(int64_t epoch, int64_t step_in_epoch, int64_t global_step, LossTotals& loss);
  // The epoch's record (its evaluation with it), its line and its checkpoint.
  void end_epoch(int64_t epoch, double epoch_seconds, const LossTotals& loss);
  // After each step: the signal that some worker got, the same on every
  // worker (one 8-byte allreduce when there are several); 0 for none.
  int agreed_stop_signal();
  // Stops after `step_in_epoch` steps of `epoch`: checkpoint, metrics record, summary.
  void stop_on_signal(int sig, int64_t epoch, int64_t step_in_epoch);
  void record_step(const StepRecord& r, int64_t epoch, int64_t step_in_epoch);
  // The epoch's loss averaged over workers, into the summary.
  void close_loss(const LossTotals& totals);
  void checkpoint(int64_t epoch, int64_t step_in_epoch);

  const TrainOptions& o_;
  StopSignals stop_signals_;  // first: installed before set-up, restored after everything else
  distributed::RendezvousInfo rdv_;
  torch::Device device_;
  std::unique_ptr<distributed::Communicator> comm_;
  RunData data_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<WeightAverage> average_;  // --eval-average: the weights evaluations score
  std::unique_ptr<data::DistributedSampler> sampler_;
  std::unique_ptr<records::MetricsWriter> metrics_;
  std::unique_ptr<Progress> progress_;
  RunSchedule schedule_;
  bool target_reached_ = false;
  int64_t steps_per_epoch_ = 0;
  int64_t global_batch_ = 0;
  int64_t first_epoch_ = 0, start_step_ = 0;
  TrainSummary summary_;
  RunTimes times_;
};

void Run::set_up() {
  o_.validate();
  rdv_ = distributed::rendezvous_from_environment();
  summary_.rank = rdv_.rank;
  device_ = training_device(o_.execution, rdv_);
  // The affinity mask's cores: in a cpuset (an emulated node, a container)
  // the machine's count would oversubscribe the few cores we have.
  const int64_t cores = common::usable_cores();
  const int64_t threads =
      o_.execution.threads > 0 ? o_.execution.threads : std::max<int64_t>(1, cores / rdv_.local_world_size);
  torch::set_num_threads(static_cast<int>(threads));

  set_up_data();
  if (rdv_.world_size > 1) {
    auto c = o_.execution.communicator;
    c.use_cuda = device_.is_cuda();
    c.cuda_device = device_.is_cuda() ? device_.index() : 0;
    if (c.use_cuda) c.require_gpu_per_nccl_worker(rdv_.local_world_size, static_cast<int>(torch::cuda::device_count()));
    comm_ = distributed::Communicator::connect(rdv_, c);
  }
  set_up_model();

  data::SamplerOptions s;
  s.dataset_size = data_.train_set->size();
  s.rank = rdv_.rank;
  s.world_size = rdv_.world_size;
  s.seed = o_.seed;
  sampler_ = std::make_unique<data::DistributedSampler>(s);
  steps_per_epoch_ = steps_in_epoch(global_batch_ / (rdv_.world_size * o_.step.accumulation_steps));

  schedule_.options.kind = o_.schedule.kind;
  schedule_.options.base_lr = o_.optimizer.lr;
  schedule_.options.warmup_epochs = o_.schedule.warmup_epochs;
  schedule_.options.total_epochs = static_cast<double>(o_.epochs);
  schedule_.lr.to = schedule_.lr.from = optim::scaled_schedule(schedule_.options, o_.schedule.scaling, global_batch_);

  const bool reports = rdv_.rank == 0;
  metrics_ = std::make_unique<records::MetricsWriter>(reports ? o_.output.metrics_path : "", o_.checkpoint.resume);
  progress_ = std::make_unique<Progress>(reports ? o_.output.progress : "none", o_.epochs);
  if (o_.evaluation.enabled && data_.test_set) {
    warm_up_evaluation(step_->model(), data_.test_set, data_.test_transform, o_.evaluation.batch_size, rdv_.rank,
                       rdv_.world_size, device_);
  }
}

void Run::set_up_data() {
  const DataOptions data = with_image_channels(o_.data, o_.model.name);
  data_.train_set = open_split(data, o_.model, o_.seed, data::Split::kTrain, rdv_.local_world_size);
  data_.source = image_folder_source(*data_.train_set, data);
  data_.decoding_sets.clear();
  if (auto folder = std::dynamic_pointer_cast<data::ImageFolderDataset>(data_.train_set)) data_.decoding_sets.push_back(folder);
  if (o_.data.validation_size > 0) {
    // Evaluations (and --target-accuracy) then read the held-out samples; the test split is not opened.
    auto held = data::hold_out(data_.train_set, o_.data.validation_size, o_.data.validation_seed);
    data_.train_set = held.train;
    data_.test_set = held.validation;
    if (o_.evaluation.final_test) {
      data_.final_test_set = open_split(data, o_.model, o_.seed, data::Split::kTest, rdv_.local_world_size);
      if (auto folder = std::dynamic_pointer_cast<data::ImageFolderDataset>(data_.final_test_set)) {
        data_.decoding_sets.push_back(folder);
      }
    }
  } else {
    data_.test_set = open_split(data, o_.model, o_.seed, data::Split::kTest, rdv_.local_world_size);
    if (auto folder = std::dynamic_pointer_cast<data::ImageFolderDataset>(data_.test_set)) data_.decoding_sets.push_back(folder);
  }
  if (!o_.schedule.batch_schedule.empty()) schedule_.batches = optim::BatchSchedule::parse(o_.schedule.batch_schedule);
  for (int64_t epoch = 0; epoch < o_.epochs; ++epoch) {
    const int64_t global = global_batch_at(epoch);  // throws if it does not divide across the workers
    if (global / o_.step.accumulation_steps > data_.train_set->size()) {
      throw std::invalid_argument(fmt::format("global batch {} (epoch {}) exceeds the {} training samples of {}",
                                              global, epoch + 1, data_.train_set->size(), data_.train_set->name()));
    }
  }
  global_batch_ = global_batch_at(0);

  const auto shape = data_.train_set->shape();
  const auto transforms = batch_transforms(o_.data, o_.model.name, *data_.train_set, data_.decoding_sets);
  data_.image_size = transforms.image_size;
  data_.input = {{"channels", shape.channels}, {"height", shape.height}, {"width", shape.width},
            {"classes", data_.train_set->num_classes()}, {"image_size", data_.image_size},
            {"synthetic_size", o_.data.synthetic_size}};
  data_.normalization = transforms.normalization;
  data_.train_transform = transforms.train;
  data_.test_transform = transforms.test;
  data_.input_dtype = resolve_input_dtype(o_.data.input_dtype, device_);
  data_.device_input.device = device_;
  if (data_.input_dtype == InputDtype::kUint8) {
    // The loader keeps the crops and flips; the device resizes and normalizes.
    data_.device_input.image_size = data_.train_transform.image_size;
    data_.device_input.mean = data_.normalization.mean;
    data_.device_input.std = data_.normalization.std;
    data_.train_transform.image_size = 0;
    data_.train_transform.mean.clear();
    data_.train_transform.std.clear();
  }
}

void Run::set_up_model() {
  const auto shape = data_.train_set->shape();
  torch::manual_seed(o_.seed);  // the same initial weights on every worker, before the broadcast too
  models::ModelOptions model_options{shape.channels, data_.train_set->num_classes(), data_.image_size};
  model_options.dropout = o_.model.dropout;
  auto model = models::make_model(o_.model.name, model_options);
  model->to(device_);
  // A run's shapes are fixed, so cuDNN's search pays for itself in the first steps.
  at::globalContext().setBenchmarkCuDNN(o_.execution.cudnn_benchmark && device_.is_cuda());
  step_ = std::make_unique<TrainStep>(model, o_.optimizer, o_.schedule.scaling.reference_batch, o_.step, o_.reducer,
                                      comm_.get(), device_, o_.seed);
  if (o_.evaluation.average_decay > 0) {
    average_ = std::make_unique<WeightAverage>(step_->model(), o_.evaluation.average_decay);
    if (rdv_.rank == 0) {
      spdlog::info("evaluations score the weights' moving average (decay {})", o_.evaluation.average_decay);
    }
  }
}

int64_t Run::global_batch_at(int64_t epoch) const {
  const int64_t per_step_workers = rdv_.world_size * o_.step.accumulation_steps;
  const int64_t global = schedule_.batches.global_batch_at(epoch, o_.step.batch_size * per_step_workers);
  if (global % per_step_workers != 0) {
    throw std::invalid_argument(
        fmt::format("batch schedule: global batch {} at epoch {} does not divide across {} workers x {} accumulation "
                    "steps",
                    global, epoch + 1, rdv_.world_size, o_.step.accumulation_steps));
  }
  return global;
}

int64_t Run::steps_in_epoch(int64_t per_worker_batch) const {
  const int64_t micro_per_rank = (sampler_->per_rank() + per_worker_batch - 1) / per_worker_batch;
  return (micro_per_rank + o_.step.accumulation_steps - 1) / o_.step.accumulation_steps;
}

void Run::change_batch(int64_t global_batch, const char* why) {
  schedule_.lr.from = schedule_.lr.to;
  schedule_.lr.to = optim::scaled_schedule(schedule_.options, o_.schedule.scaling, global_batch);
  schedule_.lr.start_step = step_->steps();
  schedule_.lr.window = o_.schedule.lr_transition_steps;
  if (rdv_.rank == 0) {
    spdlog::info("{}: global batch {} -> {}; learning rate moves to the new batch's over {} steps", why,
                 global_batch_, global_batch, schedule_.lr.window);
  }
  records::ResizeRecord resize;
  resize.step = step_->steps();
  resize.from_global_batch = global_batch_;
  resize.to_global_batch = global_batch;
  resize.lr_transition_steps = schedule_.lr.window;
  resize.reason = why;
  metrics_->write(resize);
  global_batch_ = global_batch;
}

EvalResult Run::evaluate_on(const std::shared_ptr<data::Dataset>& set) {
  // The average's buffers are each worker's own, like the model's: rank 0's are broadcast either way.
  std::optional<WeightAverage::Swapped> averaged;
  if (average_) averaged.emplace(*average_);
  if (comm_ && !step_->buffers().empty()) distributed::broadcast_from_rank0(*comm_, step_->buffers());
  return evaluate(step_->model(), set, data_.test_transform, o_.evaluation.batch_size, rdv_.rank, rdv_.world_size,
                  comm_.get(), device_);
}

EvalResult Run::evaluate_now() {
  auto eval = evaluate_on(data_.test_set);
  summary_.test_accuracy = eval.accuracy;
  const double target = o_.evaluation.target_accuracy;
  if (target > 0 && eval.accuracy >= target && !target_reached_) {
    target_reached_ = true;
    if (rdv_.rank == 0) {
      spdlog::info("test accuracy {:.2f}% reached the target {:.2f}% at step {}", 100 * eval.accuracy, 100 * target,
                   step_->steps());
    }
  }
  return eval;
}

void Run::evaluate_final_test() {
  const auto eval = evaluate_on(data_.final_test_set);
  metrics_->write(records::FinalTestRecord{step_->steps(), as_record(eval), eval.samples, 0});
  if (rdv_.rank == 0) {
    spdlog::info("final test accuracy {:.2f}% on {} test samples at step {}", 100 * eval.accuracy, eval.samples,
                 step_->steps());
  }
}

void Run::checkpoint(int64_t epoch, int64_t step_in_epoch) {
  if (o_.checkpoint.dir.empty() || rdv_.rank != 0) return;
  CheckpointState state;
  state.epoch = epoch;
  state.step_in_epoch = step_in_epoch;
  state.global_step = step_->steps();
  state.global_batch = global_batch_;
  state.world_size = rdv_.world_size;
  state.seed = o_.seed;
  state.model = o_.model.name;
  state.dataset = o_.data.dataset;
  state.input = data_.input;
  save_checkpoint(o_.checkpoint.dir, step_->model(), step_->optimizer(), state, o_.checkpoint.keep_all,
                  average_.get());
}

void Run::record_step(const StepRecord& r, int64_t epoch, int64_t step_in_epoch) {
  times_.train_seconds += r.iter_s;
  if (r.step > 1) {  // the first step pays one-time costs (allocation, thread start)
    times_.timed_samples += static_cast<double>(r.global_batch);
    times_.timed_seconds += r.iter_s;
  }
  metrics_->write(r.to_record(epoch, step_in_epoch));
  const int64_t every = o_.output.tensor_stats_every;
  if (every > 0 && r.step % every == 0 && metrics_->enabled()) {
    metrics_->write(records::TensorsRecord{r.step, step_->tensor_norms(), 0});
  }
  progress_->update(step_in_epoch, r.loss, r.iter_s > 0 ? static_cast<double>(r.global_batch) / r.iter_s : 0.0);
}

std::optional<int64_t> Run::bad_images() {
  if (!is_image_folder(o_.data.dataset)) return std::nullopt;
  // Every worker decodes its own shard: the count is the sum (every worker
  // ends the epoch here, so every one joins it).
  std::vector<double> count = {static_cast<double>(data_.train_set->bad_images())};
  if (comm_) count = comm_->sum(count);
  return static_cast<int64_t>(count[0]);
}

void Run::close_loss(const LossTotals& totals) {
  // Every worker stops at the same step (max_steps and evaluations are
  // global), so every worker joins this sum.
  std::vector<double> sums = {totals.sum, totals.count};
  if (comm_) sums = comm_->sum(sums);
  if (sums[1] > 0) summary_.train_loss = sums[0] / sums[1];
}

int Run::agreed_stop_signal() {
  const int local = g_stop_signal.load();
  if (!comm_) return local;
  return agreed_signal(comm_->sum({stop_vote(local)})[0]);
}

void Run::stop_on_signal(int sig, int64_t epoch, int64_t step_in_epoch) {
  checkpoint(epoch, step_in_epoch);
  const bool checkpointed = !o_.checkpoint.dir.empty();
  summary_.stopped_by_signal = sig;
  metrics_->write(records::StoppedRecord{step_->steps(), epoch, step_in_epoch, signal_name(sig), checkpointed, 0});
  const std::string line =
      fmt::format("stopped by {} after step {}{}", signal_name(sig), step_->steps(),
                  checkpointed ? "; checkpoint in " + o_.checkpoint.dir : "; no --checkpoint-dir, nothing saved");
  if (rdv_.rank == 0) spdlog::info("{}", line);
}

bool Run::run_epoch(int64_t epoch, int64_t start_step) {
  const auto epoch_start = Clock::now();
  if (const int64_t global = global_batch_at(epoch); global != global_batch_) change_batch(global, "batch schedule");
  const int64_t accumulation = o_.step.accumulation_steps;
  const int64_t batch_size = global_batch_ / (rdv_.world_size * accumulation);
  steps_per_epoch_ = steps_in_epoch(batch_size);
  data::PrefetchLoader loader(data_.train_set, sampler_->indices(epoch), epoch_loader_options(epoch, start_step, batch_size));
  DeviceInput input(data_.device_input);
  const NextBatch next = [&loader, &input, ahead = device_.is_cuda()] { return next_on_device(loader, input, ahead); };
  progress_->start_epoch(epoch, steps_per_epoch_);

  int64_t micro_done = start_step * accumulation;
  LossTotals loss;
  for (int64_t step = start_step; step < steps_per_epoch_; ++step) {
    if (o_.max_steps > 0 && step_->steps() >= o_.max_steps) {
      close_loss(loss);
      return false;
    }
    const double lr = schedule_.lr.learning_rate(step_->steps(), epoch + static_cast<double>(step) / steps_per_epoch_);
    const int64_t micro_count = std::min(accumulation, loader.num_batches() - micro_done);
    const auto record = step_->run(next, micro_count, lr);
    if (average_) average_->update(step_->steps());
    micro_done += micro_count;
    loss.sum += record.loss;
    loss.count += 1;
    record_step(record, epoch, step + 1);
    if (!after_step(epoch, step + 1, record.step, loss)) return false;
  }
  end_epoch(epoch, since(epoch_start), loss);
  return !target_reached_;
}

data::LoaderOptions Run::epoch_loader_options(int64_t epoch, int64_t start_step, int64_t batch_size) const {
  data::LoaderOptions lo;
  lo.batch_size = batch_size;
  lo.prefetch = o_.data.prefetch;
  lo.start_batch = start_step * o_.step.accumulation_steps;
  lo.seed = data::mix(data::mix(o_.seed, static_cast<uint64_t>(epoch)), static_cast<uint64_t>(rdv_.rank));
  lo.transform = data_.train_transform;
  lo.pin_memory = device_.is_cuda();
  lo.bytes = data_.input_dtype == InputDtype::kUint8;
  return lo;
}

bool Run::after_step(int64_t epoch, int64_t step_in_epoch, int64_t global_step, LossTotals& loss) {
  // The step is done on every worker: the one place a signal stops the
  // run, before any checkpoint or evaluation due here. After an epoch's
  // last step this is the epoch end, before its evaluation.
  if (const int sig = agreed_stop_signal(); sig != 0) {
    close_loss(loss);
    stop_on_signal(sig, epoch, step_in_epoch);
    return false;
  }
  if (o_.checkpoint.every > 0 && global_step % o_.checkpoint.every == 0) checkpoint(epoch, step_in_epoch);
  // Counted within the epoch, so that the evaluations fall at the same
  // places of every epoch and never one step after the epoch's own.
  const int64_t eval_every = o_.evaluation.every;
  if (o_.evaluation.enabled && eval_every > 0 && step_in_epoch % eval_every == 0 && step_in_epoch < steps_per_epoch_) {
    const auto eval = evaluate_now();
    metrics_->write(records::EvalRecord{epoch, global_step, as_record(eval), 0});
    if (target_reached_) {
      close_loss(loss);
      return false;
    }
  }
  return true;
}

void Run::end_epoch(int64_t epoch, double epoch_seconds, const LossTotals& loss) {
  close_loss(loss);
  const double train_loss = summary_.train_loss.value_or(0.0);
  records::EpochRecord record;
  record.epoch = epoch;
  record.step = step_->steps();
  record.global_batch = global_batch_;
  record.workers = rdv_.world_size;
  record.train_loss = train_loss;
  record.epoch_s = epoch_seconds;
  record.lr = step_->optimizer().lr();
  record.peak_rss_bytes = peak_rss_bytes();
  record.bad_images = bad_images();
  std::string line = fmt::format("epoch {}: train loss {:f}", epoch + 1, train_loss);
  if (o_.evaluation.enabled) {
    const auto eval = evaluate_now();
    record.evaluation = as_record(eval);
    // The first five characters of the percentage's %f text ("87.12", "100.0"): cut, not rounded.
    line += fmt::format(", test accuracy {:.5}%", fmt::format("{:f}", 100.0 * eval.accuracy));
  }
  metrics_->write(std::move(record));
  progress_->end_epoch(line);
  ++summary_.epochs_completed;
  checkpoint(epoch + 1, 0);
}

void Run::export_model() {
  ExportedRun run;
  run.dataset = o_.data.dataset;
  run.channels = data_.train_set->shape().channels;
  run.image_size = data_.image_size;
  run.classes = data_.train_set->num_classes();
  run.normalization = data_.normalization;
  run.steps = step_->steps();
  run.epochs = summary_.epochs_completed;
  run.accuracy = summary_.test_accuracy;
  run.evaluated_on = o_.data.validation_size > 0 ? "validation" : "test";
  // The weights that reached the accuracy it carries: the average where evaluations scored it.
  std::optional<WeightAverage::Swapped> averaged;
  if (average_) averaged.emplace(*average_);
  spdlog::info("{}", export_trained_model(step_->model(), o_.model.export_path, run));
}

void Run::resume() {
  auto state = load_checkpoint(o_.checkpoint.dir, step_->model(), step_->optimizer(), device_, average_.get());
  if (!state) {
    if (rdv_.rank == 0) spdlog::info("no checkpoint in {}; starting from scratch", o_.checkpoint.dir);
    return;
  }
  if (state->model != o_.model.name || state->dataset != o_.data.dataset) {
    throw std::runtime_error("checkpoint in " + o_.checkpoint.dir + " is for " + state->model + " on " +
                             state->dataset + ", not " + o_.model.name + " on " + o_.data.dataset);
  }
  first_epoch_ = state->epoch;
  step_->restore_steps(state->global_step);
  // Same global batch: continue exactly where it stopped. Otherwise keep the
  // number of samples seen in the epoch and continue at the step that reaches it.
  const int64_t batch_now = global_batch_at(first_epoch_);
  start_step_ = resumed_step_in_epoch(state->step_in_epoch, state->global_batch, batch_now,
                                      steps_in_epoch(batch_now / (rdv_.world_size * o_.step.accumulation_steps)));
  if (state->global_batch != global_batch_) {
    // Resized across a restart (other worker count or batch): the rate
    // moves from the checkpoint's batch to this run's over the window.
    schedule_.lr.to = optim::scaled_schedule(schedule_.options, o_.schedule.scaling, state->global_batch);
    global_batch_ = state->global_batch;
  }
  if (batch_now != global_batch_) change_batch(batch_now, "resumed at another size");
  if (rdv_.rank == 0) {
    spdlog::info("resuming from {} at epoch {} step {} (global step {})", checkpoint_path(o_.checkpoint.dir),
                 first_epoch_ + 1, start_step_, step_->steps());
  }
}

TrainSummary Run::execute() {
  const auto start = Clock::now();
  set_up();
  if (o_.checkpoint.resume) resume();
  stop_signals_.stop_at_steps();
  if (rdv_.rank == 0) {
    if (const auto warning = common::math_library_warning(); !warning.empty()) spdlog::warn("{}", warning);
    records::StartRecord start;
    start.model = o_.model.name;
    start.dataset = o_.data.dataset;
    start.parameters = models::parameter_count(step_->model());
    start.workers = rdv_.world_size;
    start.batch_size = o_.step.batch_size;
    start.accumulation_steps = o_.step.accumulation_steps;
    start.global_batch = global_batch_;
    start.steps_per_epoch = steps_per_epoch_;
    start.optimizer = step_->optimizer().name();
    start.lr_scaling = o_.schedule.scaling.rule;
    start.reference_batch = o_.schedule.scaling.reference_batch;
    start.batch_schedule = o_.schedule.batch_schedule;
    start.compute.threads = torch::get_num_threads();
    start.compute.backend = comm_ ? comm_->backend() : "none";
    start.compute.device = device_.str();
    start.compute.rendezvous = rdv_.source;
    start.compute.math_library = common::math_library();
    start.compute.precision = o_.step.precision;
    start.compute.channels_last = o_.step.channels_last;
    start.compute.cudnn_benchmark = at::globalContext().benchmarkCuDNN();
    start.train_samples = data_.train_set->size();
    start.evaluated_on = o_.data.validation_size > 0 ? "validation" : "test";
    start.evaluation_samples = data_.test_set->size();
    start.data_source = data_.source;
    metrics_->write(start);
  }
  for (int64_t epoch = first_epoch_; epoch < o_.epochs; ++epoch) {
    if (!run_epoch(epoch, epoch == first_epoch_ ? start_step_ : 0)) break;
  }
  summary_.steps = step_->steps();
  // A run cut short by --max-steps or a signal is a segment of a longer job, not its end.
  const bool cut_short = summary_.stopped_by_signal.has_value() || (o_.max_steps > 0 && summary_.steps >= o_.max_steps);
  if (data_.final_test_set && (target_reached_ || !cut_short)) evaluate_final_test();
  if (rdv_.rank == 0 && !o_.model.export_path.empty() && !summary_.stopped_by_signal) export_model();
  summary_.samples_per_second = times_.timed_seconds > 0 ? times_.timed_samples / times_.timed_seconds : 0.0;
  summary_.wall_seconds = since(start);
  if (comm_) comm_->barrier();  // nobody tears down the process group while another still reduces
  return summary_;
}

}  // namespace

TrainSummary run_training(const TrainOptions& options) {
  ignore_sigpipe();
  return Run(options).execute();
}

}  // namespace tula::train
