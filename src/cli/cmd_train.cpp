// `tula train`: one worker of a data-parallel run, or with --nproc N the whole
// single-node job (it re-runs itself under the launcher, like torchrun).
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "distributed/launcher.hpp"
#include "train/trainer.hpp"

namespace tula::cli {
namespace {

struct TrainCommand {
  train::TrainOptions options;
  int nproc = 0;
  int master_port = 29500;
  std::string master_addr = "127.0.0.1";
  std::string synthetic_shape = "3x32x32";
  bool no_augment = false;
  bool no_eval = false;
  bool no_broadcast_buffers = false;
};

void parse_shape(const std::string& text, train::TrainOptions& o) {
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

void run(TrainCommand& cmd) {
  auto& o = cmd.options;
  o.augment = !cmd.no_augment;
  o.evaluate = !cmd.no_eval;
  o.broadcast_buffers = !cmd.no_broadcast_buffers;
  parse_shape(cmd.synthetic_shape, o);
  train::validate(o);
  if (cmd.nproc > 0) {
    distributed::LaunchOptions launch;
    launch.nproc_per_node = cmd.nproc;
    launch.master_addr = cmd.master_addr;
    launch.master_port = cmd.master_port;
    launch.command.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
    for (const auto& arg : worker_arguments(raw_arguments())) launch.command.push_back(arg);
    exit_status() = distributed::launch_workers(launch).exit_code;
    return;
  }
  const auto summary = train::run_training(o);
  const char* rank = std::getenv("RANK");
  if (rank == nullptr || std::string(rank) == "0") {
    nlohmann::json j = {{"steps", summary.steps}, {"epochs", summary.epochs_completed},
                        {"train_loss", summary.final_train_loss}, {"samples_per_s", summary.samples_per_second},
                        {"wall_s", summary.wall_seconds}};
    if (summary.final_test_accuracy >= 0) j["test_accuracy"] = summary.final_test_accuracy;
    std::cout << j.dump() << std::endl;
  }
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto cmd = std::make_shared<TrainCommand>();
  auto* sub = app.add_subcommand("train", "Train a CNN data-parallel (one worker, or --nproc N on this node)");
  auto& o = cmd->options;
  sub->add_option("--model", o.model, "Model from `tula models`")->capture_default_str();
  sub->add_option("--dataset", o.dataset, "fashion-mnist, mnist, cifar10, cifar100 or synthetic")->capture_default_str();
  sub->add_option("--data-dir", o.data_dir, "Directory of the data set's files (default: its usual place)");
  sub->add_option("--image-size", o.image_size, "Resize images to this size (0: data size, raised to the model's minimum)");
  sub->add_flag("--no-augment", cmd->no_augment, "No random crop and flip");
  sub->add_option("--dropout", o.dropout, "Dropout probability of small_cnn (negative: the model's default)");
  sub->add_option("--synthetic-size", o.synthetic_size, "Samples of the synthetic data set")->capture_default_str();
  sub->add_option("--synthetic-shape", cmd->synthetic_shape, "CxHxW of synthetic samples")->capture_default_str();
  sub->add_option("--synthetic-classes", o.synthetic_classes, "Classes of the synthetic data set")->capture_default_str();
  sub->add_option("--epochs", o.epochs, "Epochs")->capture_default_str();
  sub->add_option("--batch-size,-b", o.batch_size, "Batch size per worker")->capture_default_str();
  sub->add_option("--accumulation-steps", o.accumulation_steps, "Micro-batches per optimizer step")->capture_default_str();
  sub->add_option("--max-steps", o.max_steps, "Stop after this many optimizer steps (0: no limit)")->capture_default_str();
  sub->add_option("--optimizer", o.optimizer, "sgd, lars, lamb or ags (docs/ags.md)")->capture_default_str();
  sub->add_option("--lr", o.lr, "Peak learning rate")->capture_default_str();
  sub->add_option("--momentum", o.momentum, "Momentum")->capture_default_str();
  sub->add_option("--weight-decay", o.weight_decay, "Weight decay")->capture_default_str();
  sub->add_flag("--nesterov", o.nesterov, "Nesterov momentum");
  sub->add_option("--schedule", o.schedule, "constant, step or cosine")->capture_default_str();
  sub->add_option("--warmup-epochs", o.warmup_epochs, "Linear warmup epochs")->capture_default_str();
  sub->add_option("--lr-scaling", o.lr_scaling, "Scale --lr from --reference-batch to the global batch: none, linear, sqrt")->capture_default_str();
  sub->add_option("--reference-batch", o.reference_batch, "Global batch at which --lr was tuned")->capture_default_str();
  sub->add_flag("--legw", o.legw, "Stretch the warmup by global batch / reference batch (LEGW)");
  sub->add_option("--lars-trust", o.lars_trust_coefficient, "LARS trust coefficient eta")->capture_default_str();
  sub->add_option("--lamb-beta1", o.lamb_beta1, "LAMB first-moment decay")->capture_default_str();
  sub->add_option("--lamb-beta2", o.lamb_beta2, "LAMB second-moment decay")->capture_default_str();
  sub->add_option("--lamb-eps", o.lamb_eps, "LAMB epsilon")->capture_default_str();
  sub->add_option("--ags-min", o.ags_min, "AGS lower bound s_min on the factors")->capture_default_str();
  sub->add_option("--ags-max", o.ags_max, "AGS upper bound s_max (0: global batch / reference batch)")->capture_default_str();
  sub->add_flag("--ags-unbounded", o.ags_unbounded, "AGS without clipping (ablation)");
  sub->add_option("--ags-trust-exponent", o.ags_trust_exponent, "AGS exponent of the relative trust ratio")->capture_default_str();
  sub->add_option("--ags-ablate", o.ags_ablate, "AGS statistics to switch off: comma list of noise, trust, trend");
  sub->add_option("--batch-schedule", o.batch_schedule, "Global batch by epoch, e.g. \"0:256,5:1024\" (overrides --batch-size)");
  sub->add_option("--lr-transition-steps", o.lr_transition_steps, "Steps over which the rate moves to a new batch's (0: at once)")->capture_default_str();
  sub->add_option("--max-bad-steps", o.max_bad_steps, "Stop after this many steps in a row with non-finite gradients")->capture_default_str();
  sub->add_option("--seed", o.seed, "Seed of weights, sample order and augmentation")->capture_default_str();
  sub->add_option("--metrics", o.metrics_path, "Write metrics as JSON lines to this file");
  sub->add_option("--checkpoint-dir", o.checkpoint_dir, "Write checkpoints here");
  sub->add_option("--checkpoint-every", o.checkpoint_every, "Steps between checkpoints (0: epoch ends only)")->capture_default_str();
  sub->add_flag("--keep-checkpoints", o.keep_checkpoints, "Also keep every checkpoint as step-N.pt (for tula analyze)");
  sub->add_flag("--resume", o.resume, "Continue from the latest checkpoint in --checkpoint-dir");
  sub->add_flag("--no-eval", cmd->no_eval, "Skip test evaluation after each epoch");
  sub->add_option("--eval-every", o.eval_every, "Also evaluate every this many steps (0: epoch ends only)")->capture_default_str();
  sub->add_option("--target-accuracy", o.target_accuracy, "Stop once a test evaluation reaches this accuracy (0-1; 0: never)")->capture_default_str();
  sub->add_option("--eval-batch-size", o.eval_batch_size, "Batch size of evaluation")->capture_default_str();
  sub->add_option("--tensor-stats-every", o.tensor_stats_every, "Steps between per-tensor norm records (0: never)")->capture_default_str();
  sub->add_option("--progress", o.progress, "auto, bar, lines or none")->capture_default_str();
  sub->add_option("--threads", o.threads, "Intra-op threads per worker (0: cores / local workers)")->capture_default_str();
  sub->add_option("--prefetch", o.prefetch, "Batches prepared ahead")->capture_default_str();
  sub->add_option("--bucket-mb", o.bucket_mb, "Allreduce bucket size in MiB")->capture_default_str();
  sub->add_option("--first-bucket-mb", o.first_bucket_mb, "First allreduce bucket size in MiB")->capture_default_str();
  sub->add_flag("--no-broadcast-buffers", cmd->no_broadcast_buffers, "Do not copy rank 0's buffers each step");
  sub->add_option("--rendezvous-timeout", o.rendezvous_timeout_s, "Seconds to wait for all workers")->capture_default_str();
  sub->add_option("--collective-timeout", o.collective_timeout_s, "Seconds any allreduce may take")->capture_default_str();
  sub->add_option("--backend", o.backend, "gloo, nccl or auto")->capture_default_str();
  sub->add_option("--device", o.device, "cpu or cuda")->capture_default_str();
  sub->add_option("--nproc", cmd->nproc, "Start this many workers on this node (like torchrun)");
  sub->add_option("--master-addr", cmd->master_addr, "With --nproc: rendezvous address")->capture_default_str();
  sub->add_option("--master-port", cmd->master_port, "With --nproc: rendezvous port")->capture_default_str();
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
