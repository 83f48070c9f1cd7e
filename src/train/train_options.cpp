#include "train/train_options.hpp"

#include <stdexcept>

namespace tula::train {
namespace {
void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}
}  // namespace

void validate(const TrainOptions& o) {
  require(o.epochs >= 1, "--epochs must be at least 1 (got " + std::to_string(o.epochs) + ")");
  require(o.batch_size >= 1, "--batch-size must be at least 1 (got " + std::to_string(o.batch_size) + ")");
  require(o.accumulation_steps >= 1, "--accumulation-steps must be at least 1");
  require(o.max_steps >= 0, "--max-steps must be >= 0");
  require(o.lr > 0, "--lr must be positive");
  require(o.momentum >= 0 && o.momentum < 1, "--momentum must be in [0, 1)");
  require(o.weight_decay >= 0, "--weight-decay must be >= 0");
  require(o.warmup_epochs >= 0 && o.warmup_epochs <= o.epochs, "--warmup-epochs must be in [0, epochs]");
  require(o.schedule == "constant" || o.schedule == "step" || o.schedule == "cosine",
          "unknown --schedule '" + o.schedule + "' (constant, step, cosine)");
  require(o.optimizer == "sgd", "unknown --optimizer '" + o.optimizer + "' (sgd)");
  require(!o.resume || !o.checkpoint_dir.empty(), "--resume needs --checkpoint-dir");
  require(o.checkpoint_every >= 0, "--checkpoint-every must be >= 0");
  require(o.threads >= 0, "--threads must be >= 0");
  require(o.prefetch >= 0, "--prefetch must be >= 0");
  require(o.bucket_mb > 0 && o.first_bucket_mb > 0, "--bucket-mb must be positive");
  require(o.eval_batch_size >= 1, "--eval-batch-size must be at least 1");
  require(o.rendezvous_timeout_s >= 1 && o.collective_timeout_s >= 1, "timeouts must be at least 1 s");
  require(o.device == "cpu" || o.device == "cuda", "unknown --device '" + o.device + "' (cpu, cuda)");
  require(o.synthetic_size >= 1 && o.synthetic_channels >= 1 && o.synthetic_height >= 1 &&
              o.synthetic_width >= 1 && o.synthetic_classes >= 2,
          "synthetic data needs a positive size and shape and at least 2 classes");
}

}  // namespace tula::train
