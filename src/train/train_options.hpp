// Everything `tula train` can be told, grouped by the part it configures. Plain
// data, no LibTorch: the profiler and the planner build these too. Each struct
// validates itself; TrainOptions::validate() checks them all once, plus the
// rules that span two of them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/communicator_options.hpp"
#include "distributed/reducer_options.hpp"
#include "optim/lr_rules.hpp"
#include "optim/optimizer_options.hpp"

namespace tula::train {

// What to train on.
struct DataOptions {
  std::string dataset = "fashion-mnist";  // fashion-mnist, mnist, cifar10, cifar100, synthetic, imagefolder
  std::string data_dir;                   // empty: the data set's default location
  int64_t image_size = 0;                 // 0: the data's size, raised to the model's minimum (imagefolder: 224)
  bool augment = true;                    // random crop + flip for real data sets
  int64_t prefetch = 2;                   // batches prepared ahead
  // The type training batches travel to the device in (device_input.hpp):
  // "uint8" (converted on the device), "float32" (on the loader's thread),
  // "auto" (uint8 on CUDA, float32 on the CPU).
  std::string input_dtype = "auto";
  // Hold this many training samples out and evaluate on them instead of the
  // test split (0: train on all, evaluate on the test split). The samples are
  // chosen by validation_seed alone, the same for every training seed.
  int64_t validation_size = 0;
  uint64_t validation_seed = 0;
  // Per-channel normalization: C means then C standard deviations, or one
  // mean and one deviation for every channel (empty: the data set's own).
  std::vector<double> normalize;
  // imagefolder only: what an undecodable file does ("skip": the next good
  // file of its class takes its place, with a warning; "fail": the run
  // stops naming it), and the threads decoding a batch (0: min(4, hardware
  // threads)).
  std::string on_bad_image = "skip";
  int64_t decode_threads = 0;
  // imagefolder only: channels images are decoded to (1: luminance, 3: RGB;
  // 0: what a TorchScript model's first convolution takes, else 3).
  int64_t image_channels = 0;
  // imagefolder only: the centre crop of evaluation (and of training without
  // --augment): the share of the resized shorter side kept.
  double eval_crop = 0.875;
  // imagefolder only: keep decoded images in memory (a quarter of the memory
  // available at the start, per split, shared by this machine's workers).
  bool cache_decoded = false;
  // The synthetic data set (timing only).
  int64_t synthetic_size = 10000;
  int64_t synthetic_channels = 3;
  int64_t synthetic_height = 32;
  int64_t synthetic_width = 32;
  int64_t synthetic_classes = 10;

  void validate() const;
};

// Which network.
struct NetworkOptions {
  std::string name = "small_cnn";  // from `tula models`, or a TorchScript file PATH.pt
  double dropout = -1.0;           // small_cnn's dropout; negative: the model's default
  // Write the trained TorchScript model here at the end (empty: not at all).
  std::string export_path;

  void validate() const;
};

// How the learning rate moves: the schedule over epochs, its scaling with the
// global batch (docs/ags.md), and the global batch itself when it changes.
struct ScheduleOptions {
  std::string kind = "cosine";  // constant, step, cosine
  double warmup_epochs = 0.0;
  // The rate is tuned at scaling.reference_batch and scaled to the global
  // batch by scaling.rule (none, linear, sqrt); LEGW stretches the warmup.
  optim::LrScaling scaling;
  // Elastic batch: "epoch:global_batch,..." (overrides the per-worker batch
  // from its first epoch on), and the steps over which the rate moves to a
  // new batch's.
  std::string batch_schedule;
  int64_t lr_transition_steps = 100;

  void validate(int64_t epochs) const;
};

// One optimizer step, as every worker runs it.
struct StepOptions {
  int64_t batch_size = 64;         // per worker, per micro-step
  int64_t accumulation_steps = 1;  // micro-steps per optimizer step
  bool broadcast_buffers = true;   // batch-norm statistics from rank 0 before each step, as DDP
  // Steps whose averaged gradient or loss is not finite are skipped; this many
  // in a row stop the run.
  int64_t max_bad_steps = 5;
  // A lone worker sees one batch size, which says nothing of the gradient
  // noise. Every this many steps (0: never) it reads the gradient of its first
  // micro-batch too, splitting a lone micro-batch in two halves to have one:
  // the same samples and the same averaged gradient, two batch sizes for
  // B_noise (the metrics' `probe_batch`).
  int64_t noise_probe_every = 0;
  // fp32, bf16 or fp16: forward and loss under autocast to that type (fp16
  // with a dynamic loss scale, CUDA only); the weights stay fp32.
  std::string precision = "fp32";
  // Weights, gradients and inputs of 4-d layers in NHWC order.
  bool channels_last = false;

  void validate() const;
};

struct CheckpointOptions {
  std::string dir;         // empty: no checkpoints
  int64_t every = 0;       // steps between checkpoints (0: only at epoch ends)
  bool resume = false;     // continue from the latest checkpoint in dir
  bool keep_all = false;   // also keep every checkpoint as step-N.pt

  void validate() const;
};

struct EvaluationOptions {
  bool enabled = true;           // test-split evaluation after each epoch
  int64_t batch_size = 512;
  int64_t every = 0;             // also evaluate every this many steps of each epoch (0: epoch ends only)
  double target_accuracy = 0.0;  // stop once an evaluation reaches it (0: never)
  // With a validation split: evaluate the test split once when the run ends
  // by itself (target reached or last epoch), the honest final number; the
  // split is not read before then.
  bool final_test = false;
  // Evaluations (and the exported model) score an exponential moving average
  // of the weights with this decay (train/weight_average.hpp); 0: the weights.
  double average_decay = 0.0;

  void validate() const;
};

// What the run writes while it goes.
struct OutputOptions {
  std::string metrics_path;         // JSON lines; empty: none
  std::string progress = "auto";    // auto (bar on a terminal), bar, lines, none
  int64_t tensor_stats_every = 50;  // steps between per-tensor norm records (0: never)

  void validate() const;
};

// Where and how the work runs.
struct ExecutionOptions {
  std::string device = "cpu";  // cpu, cuda
  int64_t threads = 0;         // intra-op threads per worker (0: cores / local workers)
  // cuDNN times its algorithms once per input shape and keeps the fastest
  // (a run's shapes are fixed); no effect without cuDNN.
  bool cudnn_benchmark = true;
  distributed::CommunicatorOptions communicator;  // its use_cuda follows `device`

  void validate() const;
};

struct TrainOptions {
  DataOptions data;
  NetworkOptions model;
  optim::OptimizerOptions optimizer;
  ScheduleOptions schedule;
  StepOptions step;
  distributed::ReducerOptions reducer;
  CheckpointOptions checkpoint;
  EvaluationOptions evaluation;
  OutputOptions output;
  ExecutionOptions execution;

  int64_t epochs = 1;
  int64_t max_steps = 0;  // stop after this many optimizer steps in all (0: no limit)
  uint64_t seed = 0;      // weights, sample order, augmentation, dropout

  // Checks what can be checked before any data or model is loaded; throws
  // std::invalid_argument naming the offending option.
  void validate() const;
};

// "a,b,c" -> {"a", "b", "c"} (empty items dropped).
std::vector<std::string> split_list(const std::string& text);

}  // namespace tula::train
