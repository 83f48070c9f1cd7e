#include "train/train_options.hpp"

#include <sstream>
#include <stdexcept>

#include "optim/lr_rules.hpp"

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
  require(o.optimizer == "sgd" || o.optimizer == "lars" || o.optimizer == "lamb" || o.optimizer == "ags",
          "unknown --optimizer '" + o.optimizer + "' (sgd, lars, lamb, ags)");
  optim::LrScaling scaling{o.lr_scaling, o.reference_batch, o.legw};
  optim::validate(scaling);
  require(o.ags_unbounded || o.ags_min > 0, "--ags-min must be > 0 (the convergence bound needs s_min > 0)");
  require(o.ags_unbounded || o.ags_max == 0 || o.ags_min <= o.ags_max,
          "--ags-min " + std::to_string(o.ags_min) + " is larger than --ags-max " + std::to_string(o.ags_max));
  require(o.ags_max >= 0, "--ags-max must be >= 0 (0: B / B_ref)");
  require(o.ags_trust_exponent >= 0 && o.ags_trust_exponent <= 1, "--ags-trust-exponent must be in [0, 1]");
  for (const auto& part : split_list(o.ags_ablate)) {
    require(part == "noise" || part == "trust" || part == "trend",
            "unknown --ags-ablate statistic '" + part + "' (noise, trust, trend)");
  }
  if (!o.batch_schedule.empty()) optim::BatchSchedule::parse(o.batch_schedule);  // throws with the reason
  require(o.lr_transition_steps >= 0, "--lr-transition-steps must be >= 0");
  require(o.eval_every >= 0, "--eval-every must be >= 0");
  require(o.target_accuracy >= 0 && o.target_accuracy <= 1, "--target-accuracy must be in [0, 1]");
  require(o.target_accuracy == 0 || o.evaluate, "--target-accuracy needs evaluation (drop --no-eval)");
  require(o.max_bad_steps >= 1, "--max-bad-steps must be at least 1");
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
