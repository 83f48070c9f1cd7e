// The records of a training run's metrics file (`tula train --metrics`, one
// JSON object per line, each with its "type"). One struct per type, one
// writer (to_json) and one reader (metrics_record_from_json): every part that
// writes or reads metrics.jsonl goes through these. The format is documented
// in docs/formats.md. No LibTorch here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

namespace tula::records {

// Where and how a launch computes (a part of StartRecord; the file keeps
// its keys beside the others).
struct ComputeSetup {
  int64_t threads = 0;
  std::string backend, device, rendezvous;
  std::string math_library;  // the BLAS the CPU kernels call (common::math_library()); "" where none is loaded
  // How the step computes: fp32, bf16 or fp16 (autocast), the weights' and
  // inputs' memory layout, cuDNN's algorithm search for fixed shapes.
  std::string precision = "fp32";
  bool channels_last = false;
  bool cudnn_benchmark = false;
};

// Written once per launch by rank 0, after any resume.
struct StartRecord {
  std::string model, dataset;
  int64_t parameters = 0;
  int64_t workers = 1;
  int64_t batch_size = 0;  // per worker and micro-batch
  int64_t accumulation_steps = 1;
  int64_t global_batch = 0;
  int64_t steps_per_epoch = 0;
  std::string optimizer, lr_scaling;
  int64_t reference_batch = 0;
  std::string batch_schedule;
  ComputeSetup compute;
  int64_t train_samples = 0;
  std::string evaluated_on = "test";  // test, or validation when a validation split was held out
  int64_t evaluation_samples = 0;
  // Where an image folder's files come from and how it was split (null for
  // the other data sets); written only, no reader needs it typed.
  nlohmann::json data_source;
  double time = 0;  // seconds since the Unix epoch, stamped by the writer
};

// Where one optimizer step's time went (a part of IterRecord; the file keeps
// its keys beside the others).
struct IterTimes {
  double data_wait_s = 0, compute_s = 0, comm_exposed_s = 0, comm_busy_s = 0, comm_hidden_fraction = 0;
  double optimizer_s = 0, iter_s = 0, samples_per_s = 0;
};

// One optimizer step.
struct IterRecord {
  int64_t epoch = 0, step = 0, step_in_epoch = 0;
  int64_t global_batch = 0, workers = 1;
  double loss = 0, lr = 0;
  IterTimes times;
  double local_grad_sq = 0, global_grad_sq = 0;  // squared norms of one worker's and the averaged gradient
  // Where a lone worker's noise probe measured local_grad_sq on its step's
  // first piece, that piece's batch (0: local_grad_sq is a whole worker's).
  int64_t probe_batch = 0;
  int64_t peak_rss_bytes = 0;
  bool skipped = false;  // a non-finite gradient: the step was not applied
  // What the optimizer decided (e.g. AGS's factors): an object whose keys are
  // written beside the others; written only, no reader needs them typed.
  nlohmann::json optimizer_terms;
  double time = 0;
};

// Per-tensor gradient and weight norms every --tensor-stats-every steps.
struct TensorsRecord {
  int64_t step = 0;
  nlohmann::json tensors;
  double time = 0;
};

// A test (or validation) evaluation; within an epoch (EvalRecord) or at its end (EpochRecord).
struct Evaluation {
  double test_loss = 0, test_accuracy = 0;
  double eval_s = 0;
  double train_s = 0;  // training seconds of this launch up to it
};

struct EvalRecord {
  int64_t epoch = 0, step = 0;
  Evaluation evaluation;
  double time = 0;
};

struct EpochRecord {
  int64_t epoch = 0, step = 0;
  int64_t global_batch = 0, workers = 1;
  double train_loss = 0, epoch_s = 0, lr = 0;
  int64_t peak_rss_bytes = 0;
  std::optional<Evaluation> evaluation;  // absent when evaluation is off
  // Image folders: files that could not be decoded so far, over all workers.
  std::optional<int64_t> bad_images;
  double time = 0;
};

// The global batch changed (batch schedule, or a resume at another size).
struct ResizeRecord {
  int64_t step = 0;
  int64_t from_global_batch = 0, to_global_batch = 0;
  int64_t lr_transition_steps = 0;
  std::string reason;
  double time = 0;
};

// Stopped by a signal after a whole step.
struct StoppedRecord {
  int64_t step = 0, epoch = 0, step_in_epoch = 0;
  std::string signal;
  bool checkpointed = false;
  double time = 0;
};

// With a validation split and --final-test: the one test-split evaluation,
// written when the run ended by itself (target reached or last epoch). Not an
// evaluation of the curve (evaluation_of skips it): the honest final number.
struct FinalTestRecord {
  int64_t step = 0;
  Evaluation evaluation;
  int64_t samples = 0;  // test samples evaluated
  double time = 0;
};

using MetricsRecord = std::variant<StartRecord, IterRecord, TensorsRecord, EvalRecord, EpochRecord, ResizeRecord,
                                   StoppedRecord, FinalTestRecord>;

// The "type" of each record as written.
const char* record_type(const MetricsRecord& record);

nlohmann::json to_json(const MetricsRecord& record);

// nullopt for a record of a type this build does not know (a newer writer);
// RecordError (prefixed with `where`) for a known type with a key of the wrong
// type or a required key missing ("step" of an iter record).
std::optional<MetricsRecord> metrics_record_from_json(const nlohmann::json& j, const std::string& where);

// The evaluation an eval or epoch record carries, with its step; nullopt for others.
struct StepEvaluation {
  int64_t step = 0;
  Evaluation evaluation;
  double time = 0;
};
std::optional<StepEvaluation> evaluation_of(const MetricsRecord& record);

// The step a record belongs to (the start record: nullopt).
std::optional<int64_t> step_of(const MetricsRecord& record);

}  // namespace tula::records
