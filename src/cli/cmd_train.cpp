// `tula train`: one worker of a data-parallel run, or with --nproc N the whole
// single-node job (it re-runs itself under the launcher, like torchrun).
// --batch-size auto and --nproc auto are chosen first (auto_config.hpp).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <map>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "cli/auto_config.hpp"
#include "cli/commands.hpp"
#include "cli/schema_options.hpp"
#include "distributed/launcher.hpp"
#include "optim/optimizer_options.hpp"
#include "plan/local_catalog.hpp"
#include "train/trainer.hpp"

namespace tula::cli {
namespace {

struct TrainCommand {
  train::TrainOptions options;
  std::string nproc = "0";  // a count, or "auto" (auto_config.hpp)
  std::string batch_size = std::to_string(train::StepOptions{}.batch_size);  // a count, or "auto"
  bool reprofile = false;
  double price_per_hour = plan::kDefaultLocalPricePerHour;
  int master_port = 29500;
  std::string master_addr = "127.0.0.1";
  std::string synthetic_shape = "3x32x32";
  std::string ags_ablate;  // comma list: noise, trust, trend
};

// Where `tula train` keeps each option that a tune job hands its workers
// (the schema's to_train entries, tune/option_schema.cpp): their flags, help
// and bounds are the schema's, so a worker reads what the runner wrote.
tune::OptionValue train_field(const tune::OptionSpec& s, train::TrainOptions& o) {
  using O = train::TrainOptions;
  using Field = tune::OptionValue (*)(O&);
  static const std::map<std::string_view, Field> fields = {
      {"model", [](O& t) -> tune::OptionValue { return &t.model.name; }},
      {"dataset", [](O& t) -> tune::OptionValue { return &t.data.dataset; }},
      {"target_accuracy", [](O& t) -> tune::OptionValue { return &t.evaluation.target_accuracy; }},
      {"precision", [](O& t) -> tune::OptionValue { return &t.step.precision; }},
      {"optimizer", [](O& t) -> tune::OptionValue { return &t.optimizer.name; }},
      {"lr", [](O& t) -> tune::OptionValue { return &t.optimizer.lr; }},
      {"reference_batch", [](O& t) -> tune::OptionValue { return &t.schedule.scaling.reference_batch; }},
      {"lr_scaling", [](O& t) -> tune::OptionValue { return &t.schedule.scaling.rule; }},
      {"momentum", [](O& t) -> tune::OptionValue { return &t.optimizer.momentum; }},
      {"weight_decay", [](O& t) -> tune::OptionValue { return &t.optimizer.weight_decay; }},
      {"seed", [](O& t) -> tune::OptionValue { return &t.seed; }},
      {"synthetic_size", [](O& t) -> tune::OptionValue { return &t.data.synthetic_size; }},
      {"image_size", [](O& t) -> tune::OptionValue { return &t.data.image_size; }},
      {"no_augment", [](O& t) -> tune::OptionValue { return &t.data.augment; }},
      {"eval_average", [](O& t) -> tune::OptionValue { return &t.evaluation.average_decay; }},
  };
  const auto it = fields.find(s.name);
  if (it == fields.end()) throw std::logic_error(std::string("tula train keeps no field for the option ") + s.name);
  return it->second(o);
}

// The options a tune job hands its workers, as `tula train` flags from the schema.
void add_job_flags(CLI::App& sub, train::TrainOptions& o) {
  for (const auto& s : tune::option_specs()) {
    if (s.to_train != tune::ToTrain::No) add_schema_option(sub, s, train_field(s, o))->group("Options shared with tula tune");
  }
}

// Their bounds, checked as `tula tune` and the API check them, in the same words.
void check_job_flag_bounds(train::TrainOptions& o) {
  for (const auto& s : tune::option_specs()) {
    if (s.to_train != tune::ToTrain::No) tune::check_option_bound(s, train_field(s, o));
  }
}

void parse_shape(const std::string& text, train::DataOptions& o) {
  int64_t c = 0, h = 0, w = 0;
  char x1 = 0, x2 = 0;
  std::istringstream in(text);
  if (!(in >> c >> x1 >> h >> x2 >> w) || x1 != 'x' || x2 != 'x' || c < 1 || h < 1 || w < 1) {
    throw std::invalid_argument("--synthetic-shape must look like 3x32x32 (got '" + text + "')");
  }
  o.synthetic_channels = c;
  o.synthetic_height = h;
  o.synthetic_width = w;
}

void parse_ablation(const std::string& text, optim::AgsOptions& o) {
  for (const auto& part : train::split_list(text)) {
    if (part == "noise") {
      o.use_noise = false;
    } else if (part == "trust") {
      o.use_trust = false;
    } else if (part == "trend") {
      o.use_trend = false;
    } else {
      throw std::invalid_argument("unknown --ags-ablate statistic '" + part + "' (noise, trust, trend)");
    }
  }
}

// A flag named --lars-*, --lamb-* or --ags-* configures that optimizer only:
// given with another one it would do nothing, so it is refused.
void refuse_flags_of_other_optimizers(const CLI::App& sub, const std::string& optimizer) {
  for (const auto* option : sub.get_options()) {
    if (option->count() == 0) continue;
    const std::string flag = option->get_name();
    for (const auto& name : optim::optimizer_names()) {
      const std::string prefix = "--" + name + "-";
      if (name != optimizer && flag.rfind(prefix, 0) == 0) {
        throw std::invalid_argument(flag + " applies to --optimizer " + name + " only; this run uses " + optimizer);
      }
    }
  }
}

// The arguments to hand each worker: everything but --nproc and its value.
std::vector<std::string> worker_arguments(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--nproc") {
      ++i;
      continue;
    }
    if (a.rfind("--nproc=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

// --batch-size and --nproc as numbers in `o` and `nproc`; what was "auto" in the request.
AutoRequest parse_counts(const TrainCommand& cmd, const CLI::App& sub, train::TrainOptions& o, int64_t& nproc) {
  AutoRequest r;
  const auto batch = parse_count_or_auto(cmd.batch_size, "--batch-size");
  const auto workers = parse_count_or_auto(cmd.nproc, "--nproc", 0);
  r.choose_batch = !batch;
  r.choose_workers = !workers;
  if (batch) o.step.batch_size = r.batch_size = *batch;
  nproc = workers.value_or(0);
  r.workers = std::max<int64_t>(1, nproc);
  r.launch = !workers || nproc > 0;
  if (batch || sub.count("--accumulation-steps") > 0) r.accumulation_steps = o.step.accumulation_steps;
  r.reprofile = cmd.reprofile;
  r.price_per_hour = cmd.price_per_hour;
  for (const char* flag : {"--reprofile", "--price-per-hour"}) {
    if (!r.any() && sub.count(flag) > 0) {
      throw std::invalid_argument(std::string(flag) + " applies to --batch-size auto or --nproc auto only");
    }
  }
  return r;
}

void run(TrainCommand& cmd, const CLI::App& sub) {
  auto& o = cmd.options;
  int64_t nproc = 0;
  check_job_flag_bounds(o);
  const AutoRequest request = parse_counts(cmd, sub, o, nproc);
  parse_shape(cmd.synthetic_shape, o.data);
  parse_ablation(cmd.ags_ablate, o.optimizer.ags);
  refuse_flags_of_other_optimizers(sub, o.optimizer.name);
  o.validate();
  std::vector<std::string> args = raw_arguments();
  if (request.any()) {  // chosen here, before anything trains; the workers get the numbers
    const auto choice = choose_configuration(o, request, std::cerr);
    o.step.batch_size = choice.batch_per_worker;
    o.step.accumulation_steps = choice.accumulation_steps;
    if (request.launch) nproc = choice.workers;
    args = resolved_arguments(args, choice, nproc > 0);
    o.validate();
  }
  if (nproc > 0) {
    distributed::LaunchOptions launch;
    launch.nproc_per_node = static_cast<int>(nproc);
    launch.master_addr = cmd.master_addr;
    launch.master_port = cmd.master_port;
    launch.command.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
    for (const auto& arg : worker_arguments(args)) launch.command.push_back(arg);
    exit_status() = distributed::launch_workers(launch).exit_code;
    return;
  }
  const auto summary = train::run_training(o);
  if (summary.rank == 0) std::cout << summary.to_json().dump() << std::endl;
  if (summary.stopped_by_signal) exit_status() = 128 + *summary.stopped_by_signal;  // as a shell reports it
}

// A flag that binds a duration in whole seconds to a std::chrono field.
void add_seconds_option(CLI::App& sub, const std::string& flag, std::chrono::milliseconds& field,
                        const std::string& help) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(field).count();
  sub.add_option_function<int64_t>(flag, [&field](int64_t s) { field = std::chrono::seconds(s); }, help)
      ->default_str(std::to_string(seconds));
}

// A flag in MiB that binds a byte count.
void add_mib_option(CLI::App& sub, const std::string& flag, int64_t& bytes, const std::string& help) {
  sub.add_option_function<double>(flag, [&bytes](double mib) { bytes = static_cast<int64_t>(mib * (1 << 20)); },
                                  help)
      ->default_str(std::to_string(static_cast<double>(bytes) / (1 << 20)));
}

// `tula train`'s flags, a group each, in the order --help shows them (add_train_command).

// The model and the data set.
void add_model_and_data_flags(CLI::App& sub, TrainCommand& cmd) {
  auto& o = cmd.options;
  auto& data = o.data;
  sub.add_option("--export", o.model.export_path,
                 "At the end, write the trained TorchScript model here (PATH.pt; with its input and normalization)");
  sub.add_option("--dropout", o.model.dropout, "Dropout probability of small_cnn (negative: the model's default)");
  sub.add_option("--data-dir", data.data_dir, "Directory of the data set's files (default: its usual place)");
  sub.add_option("--normalize", data.normalize,
                 "MEAN,STD for every channel, or C means then C deviations (default: the data set's own)")
      ->delimiter(',');
  sub.add_option("--prefetch", data.prefetch, "Batches prepared ahead")->capture_default_str();
  sub.add_option("--input-dtype", data.input_dtype,
                 "The type training batches travel to the device in: uint8 (a quarter of the bytes; resized and "
                 "normalized on the device), float32 (finished on the loader's thread), auto (uint8 on CUDA, "
                 "float32 on the CPU)")
      ->capture_default_str();
  sub.add_option("--on-bad-image", data.on_bad_image,
                 "imagefolder: an undecodable file is skipped (the next good file of its class takes its place, "
                 "with a warning) or fails the run: skip, fail")
      ->capture_default_str();
  sub.add_option("--decode-threads", data.decode_threads, "imagefolder: threads decoding each batch (0: min(4, hardware threads))")
      ->capture_default_str();
  sub.add_option("--eval-crop", data.eval_crop,
                 "imagefolder: evaluation resizes the shorter side to image-size / F and keeps the centre "
                 "image-size (0.875: ImageNet's; 1: the whole image)")
      ->capture_default_str();
  sub.add_flag("--cache-decoded", data.cache_decoded,
               "imagefolder: keep images decoded in memory after their first use (up to a quarter of the memory "
               "available, per split, shared by this machine's workers)");
  sub.add_option("--image-channels", data.image_channels,
                 "imagefolder: decode to 1 (luminance) or 3 (RGB) channels (0: what the model takes)")
      ->capture_default_str();
  sub.add_option("--validation-size", data.validation_size,
                 "Hold out this many training samples and evaluate on them instead of the test split "
                 "(records still say test_accuracy; the start record says evaluated_on)")
      ->capture_default_str();
  sub.add_option("--validation-seed", data.validation_seed, "Seed that picks the held-out samples (not --seed)")
      ->capture_default_str();
  sub.add_option("--synthetic-shape", cmd.synthetic_shape, "CxHxW of synthetic samples")->capture_default_str();
  sub.add_option("--synthetic-classes", data.synthetic_classes, "Classes of the synthetic data set")->capture_default_str();
}

// How long the run is, and what one step does.
void add_length_and_step_flags(CLI::App& sub, TrainCommand& cmd) {
  auto& o = cmd.options;
  sub.add_option("--epochs", o.epochs, "Epochs")->capture_default_str();
  sub.add_option("--max-steps", o.max_steps, "Stop after this many optimizer steps (0: no limit)")->capture_default_str();

  auto& step = o.step;
  sub.add_option("--batch-size,-b", cmd.batch_size,
                 "Batch size per worker, or 'auto': chosen with --accumulation-steps for this machine "
                 "(from a cached quick profile; see --reprofile)")
      ->capture_default_str();
  sub.add_option("--accumulation-steps", step.accumulation_steps, "Micro-batches per optimizer step")->capture_default_str();
  sub.add_flag("--broadcast-buffers,!--no-broadcast-buffers", step.broadcast_buffers,
               "Copy rank 0's buffers (batch-norm statistics) to every worker before each step, as DDP");
  sub.add_option("--max-bad-steps", step.max_bad_steps, "Stop after this many steps in a row with non-finite gradients")->capture_default_str();
  sub.add_option("--noise-probe-every", step.noise_probe_every,
                 "One worker: every this many steps also measure the gradient of half the batch (the metrics' probe_batch), "
                 "a second batch size for the gradient noise scale (0: never)")
      ->capture_default_str();
  sub.add_flag("--channels-last", step.channels_last, "4-d weights, gradients and inputs in NHWC memory order");
}

// The optimizer and its terms.
void add_optimizer_flags(CLI::App& sub, TrainCommand& cmd) {
  auto& o = cmd.options;
  auto& opt = o.optimizer;
  sub.add_flag("--nesterov", opt.nesterov, "Nesterov momentum (sgd, lars, ags)");
  sub.add_option("--lars-trust", opt.lars.trust_coefficient, "LARS trust coefficient eta")->capture_default_str();
  sub.add_option("--lamb-beta2", opt.lamb.beta2, "LAMB second-moment decay")->capture_default_str();
  sub.add_option("--lamb-eps", opt.lamb.eps, "LAMB epsilon")->capture_default_str();
  sub.add_option("--ags-min", opt.ags.s_min, "AGS lower bound s_min on the factors")->capture_default_str();
  sub.add_option("--ags-max", opt.ags.s_max, "AGS upper bound s_max (0: global batch / reference batch)")->capture_default_str();
  sub.add_flag("!--ags-unbounded", opt.ags.bounded, "AGS without clipping (ablation)");
  sub.add_option("--ags-trust-exponent", opt.ags.trust_exponent, "AGS exponent of the relative trust ratio")->capture_default_str();
  sub.add_flag("--ags-per-layer", opt.ags.per_layer, "AGS: one factor per layer (a module's weight and bias) instead of per tensor");
  sub.add_option("--ags-direction", opt.ags.direction,
                 "AGS: what the factors scale, momentum (momentum SGD) or adam (Adam's normalized step)")
      ->capture_default_str();
  sub.add_option("--optimizer-update", opt.update,
                 "How the update is applied: foreach (multi-tensor operators over all tensors), per-tensor, or auto "
                 "(foreach on a GPU, per-tensor on the CPU, the faster there)")
      ->capture_default_str();
  sub.add_option("--ags-ablate", cmd.ags_ablate, "AGS statistics to switch off: comma list of noise, trust, trend");
}

// The learning rate and batch schedules.
void add_schedule_flags(CLI::App& sub, TrainCommand& cmd) {
  auto& o = cmd.options;
  auto& schedule = o.schedule;
  sub.add_option("--schedule", schedule.kind, "constant, step or cosine")->capture_default_str();
  sub.add_option("--warmup-epochs", schedule.warmup_epochs, "Linear warmup epochs")->capture_default_str();
  sub.add_flag("--legw", schedule.scaling.legw, "Stretch the warmup by global batch / reference batch (LEGW)");
  sub.add_option("--batch-schedule", schedule.batch_schedule, "Global batch by epoch, e.g. \"0:256,5:1024\" (overrides --batch-size)");
  sub.add_option("--lr-transition-steps", schedule.lr_transition_steps, "Steps over which the rate moves to a new batch's (0: at once)")->capture_default_str();
}

// Checkpoints and evaluations.
void add_checkpoint_and_evaluation_flags(CLI::App& sub, TrainCommand& cmd) {
  auto& o = cmd.options;
  auto& ckpt = o.checkpoint;
  sub.add_option("--checkpoint-dir", ckpt.dir, "Write checkpoints here");
  sub.add_option("--checkpoint-every", ckpt.every, "Steps between checkpoints (0: epoch ends only)")->capture_default_str();
  sub.add_flag("--keep-checkpoints", ckpt.keep_all, "Also keep every checkpoint as step-N.pt (for tula analyze)");
  sub.add_flag("--resume", ckpt.resume, "Continue from the latest checkpoint in --checkpoint-dir");

  auto& eval = o.evaluation;
  sub.add_flag("--eval,!--no-eval", eval.enabled, "Evaluate on the test split after each epoch (--no-eval: never)");
  sub.add_option("--eval-every", eval.every, "Also evaluate every this many steps of each epoch (0: epoch ends only)")
      ->capture_default_str();
  sub.add_flag("--final-test", eval.final_test,
               "With --validation-size: evaluate the test split once when the run ends by itself");
  sub.add_option("--eval-batch-size", eval.batch_size, "Batch size of evaluation")->capture_default_str();
}

// What the run writes, and where and how it computes.
void add_output_and_execution_flags(CLI::App& sub, TrainCommand& cmd) {
  auto& o = cmd.options;
  auto& out = o.output;
  sub.add_option("--metrics", out.metrics_path, "Write metrics as JSON lines to this file");
  sub.add_option("--tensor-stats-every", out.tensor_stats_every, "Steps between per-tensor norm records (0: never)")->capture_default_str();
  sub.add_option("--progress", out.progress, "auto, bar, lines or none")->capture_default_str();

  auto& exec = o.execution;
  sub.add_option("--device", exec.device, "cpu or cuda")->capture_default_str();
  sub.add_option("--threads", exec.threads, "Intra-op threads per worker (0: cores / local workers)")->capture_default_str();
  sub.add_flag("--cudnn-benchmark,!--no-cudnn-benchmark", exec.cudnn_benchmark,
               "Let cuDNN time its algorithms for each input shape and keep the fastest (on by default)");
  sub.add_option("--backend", exec.communicator.backend, "gloo, nccl or auto (nccl on cuda)")->capture_default_str();
  add_seconds_option(sub, "--rendezvous-timeout", exec.communicator.rendezvous_timeout, "Seconds to wait for all workers");
  add_seconds_option(sub, "--collective-timeout", exec.communicator.collective_timeout, "Seconds any allreduce may take");
  add_mib_option(sub, "--bucket-mb", o.reducer.bucket_bytes, "Allreduce bucket size in MiB");
  add_mib_option(sub, "--first-bucket-mb", o.reducer.first_bucket_bytes, "First allreduce bucket size in MiB");
}

// Workers started on this node, and the automatic choices.
void add_launch_flags(CLI::App& sub, TrainCommand& cmd) {
  sub.add_option("--nproc", cmd.nproc,
                 "Start this many workers on this node (like torchrun), or 'auto': as many as the plan for "
                 "this machine chooses");
  sub.add_flag("--reprofile", cmd.reprofile,
               "With an 'auto': measure the quick profile again and replace the cached one");
  sub.add_option("--price-per-hour", cmd.price_per_hour,
                 "With an 'auto': this machine's price per hour, the cost side of the time/cost knee")
      ->capture_default_str();
  sub.add_option("--master-addr", cmd.master_addr, "With --nproc: rendezvous address")->capture_default_str();
  sub.add_option("--master-port", cmd.master_port, "With --nproc: rendezvous port")->capture_default_str();
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto cmd = std::make_shared<TrainCommand>();
  auto* sub = app.add_subcommand("train", "Train a CNN data-parallel (one worker, or --nproc N on this node)");
  add_job_flags(*sub, cmd->options);
  for (const auto add : {add_model_and_data_flags, add_length_and_step_flags, add_optimizer_flags, add_schedule_flags,
                         add_checkpoint_and_evaluation_flags, add_output_and_execution_flags, add_launch_flags}) {
    add(*sub, *cmd);
  }
  sub->callback([cmd, sub] { run(*cmd, *sub); });
}

}  // namespace tula::cli
