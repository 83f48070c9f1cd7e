// Everything `tula train` can be told. Plain data, no LibTorch: the service and
// the planner build these too.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tula::train {

struct TrainOptions {
  // What to train on.
  std::string model = "small_cnn";
  std::string dataset = "fashion-mnist";  // fashion-mnist, mnist, cifar10, cifar100, synthetic
  std::string data_dir;                   // empty: the data set's default location
  int64_t image_size = 0;                 // 0: the data's size, raised to the model's minimum
  double dropout = -1.0;                  // small_cnn's dropout; negative: the model's default
  bool augment = true;                    // random crop + flip for real data sets
  int64_t synthetic_size = 10000;
  int64_t synthetic_channels = 3;
  int64_t synthetic_height = 32;
  int64_t synthetic_width = 32;
  int64_t synthetic_classes = 10;

  // How long and how big.
  int64_t epochs = 1;
  int64_t batch_size = 64;         // per worker, per micro-step
  int64_t accumulation_steps = 1;  // micro-steps per optimizer step
  int64_t max_steps = 0;           // stop after this many optimizer steps in all (0: no limit)

  // Optimizer and schedule.
  std::string optimizer = "sgd";
  double lr = 0.1;
  double momentum = 0.9;
  double weight_decay = 5e-4;
  bool nesterov = false;
  std::string schedule = "cosine";  // constant, step, cosine
  double warmup_epochs = 0.0;
  // Large batches (docs/ags.md): the rate is tuned at reference_batch and
  // scaled to the global batch by lr_scaling (none, linear, sqrt); LEGW
  // stretches the warmup by the same batch ratio.
  std::string lr_scaling = "none";
  int64_t reference_batch = 128;
  bool legw = false;
  double lars_trust_coefficient = 0.001;
  double lamb_beta1 = 0.9, lamb_beta2 = 0.999, lamb_eps = 1e-6;
  double ags_min = 1.0;
  double ags_max = 0.0;            // 0: B / B_ref
  bool ags_unbounded = false;      // ablation: no clipping
  double ags_trust_exponent = 0.5;
  std::string ags_ablate;          // comma list of statistics to switch off: noise, trust, trend
  // Elastic batch: "epoch:global_batch,..." (overrides --batch-size from its
  // first epoch on), and the steps over which the rate moves to a new batch's.
  std::string batch_schedule;
  int64_t lr_transition_steps = 100;
  // Steps whose averaged gradient is not finite are skipped; this many in a
  // row stop the run.
  int64_t max_bad_steps = 5;

  // Reproducibility and output.
  uint64_t seed = 0;
  std::string metrics_path;        // JSON lines; empty: none
  std::string checkpoint_dir;      // empty: no checkpoints
  int64_t checkpoint_every = 0;    // steps between checkpoints (0: only at epoch ends)
  bool resume = false;
  bool keep_checkpoints = false;   // also keep every checkpoint as step-N.pt
  bool evaluate = true;            // test-split evaluation after each epoch
  int64_t eval_batch_size = 512;
  int64_t eval_every = 0;          // also evaluate every this many steps (0: epoch ends only)
  double target_accuracy = 0.0;    // stop once an evaluation reaches it (0: never)
  int64_t tensor_stats_every = 50; // steps between per-tensor norm records (0: never)
  std::string progress = "auto";   // auto (bar on a terminal), bar, lines, none

  // Execution.
  int64_t threads = 0;             // intra-op threads per worker (0: cores / local workers)
  int64_t prefetch = 2;
  double bucket_mb = 25.0;
  double first_bucket_mb = 1.0;
  bool broadcast_buffers = true;   // batch-norm statistics from rank 0 before each step, as DDP
  int64_t rendezvous_timeout_s = 120;
  int64_t collective_timeout_s = 300;
  std::string backend = "auto";
  std::string device = "cpu";      // cpu, cuda
};

// Checks what can be checked before any data or model is loaded; throws
// std::invalid_argument naming the offending option.
void validate(const TrainOptions& options);

// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text);

}  // namespace tula::train
