// The profile: what `tula profile` measured about one model on one data set and
// one machine, as a versioned JSON document ("tula-profile", version 1). It
// keeps every raw sample, so a later, better fit can be run on old profiles,
// and the fitted parameters, so a reader need not refit. See docs/models.md for
// the schema and an example.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/machine_spec.hpp"

namespace tula::predict {

inline constexpr const char* kProfileFormat = "tula-profile";
inline constexpr int kProfileVersion = 1;

// Minimum distinct points of each required sample set: two parameters and at
// least one residual degree of freedom, so every parameter has a standard error.
inline constexpr int kMinComputePoints = 3;
inline constexpr int kMinAllreducePoints = 3;
inline constexpr int kMinMemoryPoints = 3;

struct ModelInfo {
  std::string name;
  int64_t parameters = 0;
  int64_t gradient_bytes = 0;  // bytes allreduced per step (fp32: 4 x parameters)
  // The engine's allreduce buckets, in the order backward fills them
  // (distributed/bucket_layout.hpp); empty: profiles before, whose buckets
  // are reckoned from the byte caps alone.
  std::vector<int64_t> bucket_bytes;
};

struct DataInfo {
  std::string name;
  int64_t train_samples = 0;  // D: iterations per epoch = ceil(D / B)
  int64_t test_samples = 0;   // evaluated once per epoch
  std::vector<int64_t> input_shape;  // C, H, W (optional, descriptive)
  // An image folder: bytes one image takes decoded in --cache-decoded's
  // cache, as measured (0: not measured, or not a folder).
  double decoded_bytes_per_sample = 0;
  // Read once more when training ends (a job whose curve reads a validation
  // split ends on the test split: tune::apply_validation_split); 0: no such
  // reading. Set in memory, not kept in a profile's file.
  int64_t final_test_samples = 0;
};

struct DeviceInfo {
  std::string kind;  // "cpu" or "cuda": matched against a catalog's device_kind
  // The device as it names itself: the CPU model, or CUDA's device name
  // ("NVIDIA H100 80GB HBM3"), matched against a catalog's accelerator model.
  std::string name;
  int64_t memory_bytes = 0;  // per device (CUDA: cudaMemGetInfo's total; CPU: what the workers may use)
  int64_t count = 1;         // devices of this kind on the profiled node (GPUs visible to the process)
};


struct HardwareInfo {
  std::string cpu_model;
  int64_t cores = 0;
  DeviceInfo device;
  std::string hostname;  // optional
  // The BLAS library the CPU kernels call (the file that provides sgemm_),
  // "" where the process loads none: with the reference BLAS a model's steps
  // can take twice as long as with OpenBLAS on the same CPU, so a profile
  // timed with one does not describe the other.
  std::string math_library;
};

// The name a profile's device goes by: its own, or for CPU profiles written
// before device names were recorded, the CPU model.
std::string device_name(const HardwareInfo& h);

// How the engine groups gradients for allreduce (src/distributed/reducer.cpp): the
// first bucket small so communication starts early in backward, then large
// ones so per-message latency is paid rarely. Same defaults as PyTorch DDP.
struct BucketSettings {
  int64_t bucket_bytes = 25LL << 20;
  int64_t first_bucket_bytes = 1LL << 20;
};

// Forward+backward and optimizer times of one worker at one per-worker batch,
// with `workers_per_node` workers running at once on the node (contention).
struct ComputeSample {
  int64_t batch_per_worker = 0;
  int64_t workers_per_node = 1;
  std::vector<double> forward_backward_s;
  std::vector<double> optimizer_s;  // may be empty when not measured separately
  // Per bucket of model.bucket_bytes, in the order they launch: the median
  // share of forward+backward elapsed when the bucket was ready for its
  // allreduce (non-decreasing, in [0, 1]; empty: not recorded). Where the
  // allreduce can start is a property of the model's layers, measured on one
  // worker: backward's conv layers come after the gradients of the large
  // fully connected ones.
  std::vector<double> bucket_ready_fraction;
};

// One allreduce of `bytes` over `workers` processes, repeated.
struct AllreduceSample {
  int64_t workers = 0;
  int64_t bytes = 0;
  std::vector<double> seconds;
};

struct MemorySample {
  int64_t batch = 0;  // per worker
  int64_t bytes = 0;  // peak bytes of one worker at that batch
};

// A data-parallel step measured whole: the share of allreduce time hidden
// behind backward, and (optional) forward+backward plus exposed communication
// per step, from which the overlap exponent is fitted.
struct OverlapSample {
  int64_t workers = 0;
  int64_t workers_per_node = 1;
  int64_t batch_per_worker = 0;
  double hidden_fraction = 0;
  std::vector<double> step_s;  // compute_s + comm_exposed_s per iteration; may be empty
};

// Evaluation of `samples` test examples sharded over `workers`.
struct EvaluationSample {
  int64_t workers = 1;
  int64_t samples = 0;
  std::vector<double> seconds;
};

// `tula train`'s loader timed alone (read, decode, augment, normalize and
// batch, on its own threads, with nothing training): seconds between
// batches of `batch` samples once its prefetch queue has drained.
struct LoaderSample {
  int64_t batch = 0;
  int64_t threads = 1;  // threads this loader decodes on
  std::vector<double> seconds;
};

// Training steps of one worker fed by that loader: each step's wall time
// (the wait for its batch plus forward, backward and optimizer), and the
// compute part of it as the step measured it (may be empty).
struct InputStepSample {
  int64_t batch = 0;
  std::vector<double> step_s;
  std::vector<double> compute_s;
};

// One training step's gradient statistics as the engine records them:
// local_grad_sq = mean over workers of |g_local|^2 at batch local_batch,
// global_grad_sq = |allreduced g|^2 at batch global_batch.
struct NoiseSample {
  int64_t step = 0;
  int64_t local_batch = 0;
  int64_t global_batch = 0;
  double local_grad_sq = 0;
  double global_grad_sq = 0;
};

// A pilot run that reached the target accuracy: optimizer steps it took at a
// global batch (one entry per repeat), and, when its metrics had them, its
// layout and median seconds per optimizer step (0: not recorded), which
// calibrate the compute model to the real job.
struct PilotRun {
  int64_t global_batch = 0;
  std::vector<double> steps_to_target;
  int64_t workers = 0;  // in all, over `nodes` nodes
  int64_t batch_per_worker = 0;
  int64_t accumulation_steps = 1;
  double seconds_per_step = 0;
  // Of the step, the allreduce waited for after backward, and the time some
  // allreduce was in flight (< 0: not recorded, and the whole step
  // calibrates the compute).
  double comm_exposed_s = -1;
  double comm_busy_s = -1;
  // One evaluation's seconds at this layout (0: none measured); the
  // evaluation model is calibrated to it as the compute model to the step.
  double eval_s = 0;
  // Where it ran. A profile's file holds pilots of one node of the profiled
  // machine; the tune runner's own measurements may come from several nodes
  // of a catalog's machine type, and are compared with the prediction there.
  int64_t nodes = 1;
  std::optional<MachineSpec> machine = std::nullopt;  // nullopt: the profiled machine
};

struct Profile {
  std::string created;  // optional ISO time
  ModelInfo model;
  DataInfo data;
  HardwareInfo hardware;
  BucketSettings buckets;
  double target_accuracy = 0;  // the accuracy pilots were run to (0: none)
  // The precision its steps ran at (`--precision`: fp32, bf16, fp16); a
  // profile times one, and a job at another is profiled anew.
  std::string precision = "fp32";

  std::vector<ComputeSample> compute;
  std::vector<AllreduceSample> allreduce;
  std::vector<MemorySample> memory;
  std::vector<OverlapSample> overlap;
  std::vector<EvaluationSample> evaluation;
  std::vector<LoaderSample> loader;        // optional: the input pipeline (input_model.hpp)
  std::vector<InputStepSample> input_steps;
  std::vector<NoiseSample> gradient_noise;
  std::vector<PilotRun> pilots;

  nlohmann::json fitted;  // null until fitted (see fit.hpp)
};

// Strict readers: malformed JSON, another format, an old or newer version, a
// missing or ill-typed field, or fewer than the minimum samples throw
// ProfileError naming the field.
Profile parse_profile(const std::string& text);
Profile profile_from_json(const nlohmann::json& j);
Profile load_profile(const std::string& path);

nlohmann::json to_json(const Profile& p);
void save_profile(const Profile& p, const std::string& path);  // atomic (temp + rename)

// Counts distinct settings of each required sample set against the minimums.
void check_minimum_samples(const Profile& p);

}  // namespace tula::predict
