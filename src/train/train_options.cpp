#include "train/train_options.hpp"

#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "common/engine_names.hpp"
#include "common/number_range.hpp"

namespace tula::train {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}
}  // namespace

void DataOptions::validate() const {
  require(image_size >= 0, "--image-size must be >= 0 (0: the data's own size)");
  require(prefetch >= 0, "--prefetch must be >= 0");
  require(validation_size >= 0, "--validation-size must be >= 0 (0: evaluate on the test split)");
  require(on_bad_image == "skip" || on_bad_image == "fail", "unknown --on-bad-image '" + on_bad_image + "' (skip, fail)");
  require(input_dtype == "auto" || input_dtype == "float32" || input_dtype == "uint8",
          "unknown --input-dtype '" + input_dtype + "' (auto, float32, uint8)");
  require(decode_threads >= 0, "--decode-threads must be >= 0 (0: min(4, hardware threads))");
  require(synthetic_size >= 1 && synthetic_channels >= 1 && synthetic_height >= 1 && synthetic_width >= 1 &&
              synthetic_classes >= 2,
          "synthetic data needs a positive size and shape and at least 2 classes");
  require(eval_crop > 0 && eval_crop <= 1, "--eval-crop must be in (0, 1] (0.875: ImageNet's 224 of 256)");
  require(image_channels == 0 || image_channels == 1 || image_channels == 3,
          "--image-channels must be 1 (luminance) or 3 (RGB), or 0 to follow the model");
  require(normalize.empty() || normalize.size() % 2 == 0,
          "--normalize takes means then standard deviations: MEAN,STD or C means then C deviations");
  for (size_t i = normalize.size() / 2; i < normalize.size(); ++i) {
    require(normalize[i] > 0, "--normalize: standard deviations must be positive");
  }
}

void NetworkOptions::validate() const {
  require(!name.empty(), "--model must name a model (see `tula models`)");
  require(dropout < 1, "--dropout must be below 1 (negative: the model's default)");
  require(export_path.empty() || common::is_script_model_path(name),
          "--export writes TorchScript and needs a model given as a TorchScript file (--model PATH.pt); zoo models "
          "are C++ modules");
  require(export_path.empty() || common::is_script_model_path(export_path), "--export must name a file ending in .pt");
}

void ScheduleOptions::validate(int64_t epochs) const {
  require(kind == "constant" || kind == "step" || kind == "cosine",
          "unknown --schedule '" + kind + "' (constant, step, cosine)");
  require(warmup_epochs >= 0 && warmup_epochs <= static_cast<double>(epochs),
          "--warmup-epochs must be in [0, epochs]");
  optim::validate(scaling);
  if (!batch_schedule.empty()) optim::BatchSchedule::parse(batch_schedule);  // throws with the reason
  require(lr_transition_steps >= 0, "--lr-transition-steps must be >= 0");
}

void StepOptions::validate() const {
  require(batch_size >= 1, fmt::format("--batch-size must be at least 1 (got {})", batch_size));
  require(accumulation_steps >= 1, "--accumulation-steps must be at least 1");
  require(max_bad_steps >= 1, "--max-bad-steps must be at least 1");
  require(noise_probe_every >= 0, "--noise-probe-every must be 0 (never) or a positive number of steps");
  require(precision == "fp32" || precision == "bf16" || precision == "fp16",
          "unknown --precision '" + precision + "' (fp32, bf16, fp16)");
}

void CheckpointOptions::validate() const {
  require(!resume || !dir.empty(), "--resume needs --checkpoint-dir");
  require(every >= 0, "--checkpoint-every must be >= 0");
  require(every == 0 || !dir.empty(), "--checkpoint-every needs --checkpoint-dir");
  require(!keep_all || !dir.empty(), "--keep-checkpoints needs --checkpoint-dir");
}

void EvaluationOptions::validate() const {
  require(batch_size >= 1, "--eval-batch-size must be at least 1");
  require(every >= 0, "--eval-every must be >= 0");
  // The ranges `tula tune` and the API check too, in the same words (common/number_range.hpp).
  if (const auto r = common::range_refusal(common::kTargetAccuracy, target_accuracy)) {
    throw std::invalid_argument("--target-accuracy " + *r);
  }
  if (const auto r = common::range_refusal(common::kEvalAverage, average_decay)) {
    throw std::invalid_argument("--eval-average " + *r);
  }
  require(target_accuracy == 0 || enabled, "--target-accuracy needs evaluation (drop --no-eval)");
  require(every == 0 || enabled, "--eval-every needs evaluation (drop --no-eval)");
}

void OutputOptions::validate() const {
  require(progress == "auto" || progress == "bar" || progress == "lines" || progress == "none",
          "unknown --progress '" + progress + "' (auto, bar, lines, none)");
  require(tensor_stats_every >= 0, "--tensor-stats-every must be >= 0");
}

void ExecutionOptions::validate() const {
  require(device == "cpu" || device == "cuda", "unknown --device '" + device + "' (cpu, cuda)");
  require(threads >= 0, "--threads must be >= 0");
  auto comm = communicator;
  comm.use_cuda = device == "cuda";
  comm.validate();
}

void TrainOptions::validate() const {
  require(epochs >= 1, fmt::format("--epochs must be at least 1 (got {})", epochs));
  require(max_steps >= 0, "--max-steps must be >= 0");
  data.validate();
  model.validate();
  optimizer.validate();
  schedule.validate(epochs);
  step.validate();
  require(step.precision != "fp16" || execution.device == "cuda",
          "--precision fp16 needs --device cuda (LibTorch's CPU autocast and loss-scale kernels are bf16/CUDA only); "
          "use --precision bf16 on the CPU");
  reducer.validate();
  checkpoint.validate();
  evaluation.validate();
  require(!evaluation.final_test || data.validation_size > 0,
          "--final-test needs --validation-size (without it every evaluation is on the test split already)");
  output.validate();
  execution.validate();
}

}  // namespace tula::train
