// `tula tune`: one command from a model and a data set to a trained model at
// the configuration the objective picks (src/tune/runner.hpp).
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.hpp"
#include "tune/runner.hpp"

namespace tula::cli {
namespace {

struct TuneCommand {
  tune::TuneOptions options;
  std::string model, dataset, resume_dir;
  bool no_replan = false;
  bool no_noise_growth = false;
  bool no_epochs_floor = false;
  bool no_profile_cache = false;
  bool no_history = false;
  bool forecast_alone = false;
  bool no_exponent_prior = false;
};

// The first SIGINT or SIGTERM asks the job to stop cleanly (the workers
// checkpoint); a second one ends the command at once, and the workers with it.
void on_stop_signal(int sig) {
  tune::request_tune_stop(sig);
  ::signal(sig, SIG_DFL);
}

void run(TuneCommand& cmd) {
  auto& o = cmd.options;
  if (!cmd.resume_dir.empty()) {
    o.resume = true;
    o.out_dir = cmd.resume_dir;
    o.model = cmd.model;  // empty unless given: then it must match the job's
    o.dataset = cmd.dataset;
  } else {
    if (!cmd.model.empty()) o.model = cmd.model;
    if (!cmd.dataset.empty()) o.dataset = cmd.dataset;
  }
  o.replan = !cmd.no_replan;
  o.noise_growth = !cmd.no_noise_growth;
  o.epochs_floor = !cmd.no_epochs_floor;
  o.profile_cache = !cmd.no_profile_cache;
  o.history = !cmd.no_history;
  o.forecast_with_prior = !cmd.forecast_alone;
  o.forecast_exponent_prior = !cmd.no_exponent_prior;
  ::signal(SIGINT, on_stop_signal);
  ::signal(SIGTERM, on_stop_signal);
  ::signal(SIGPIPE, SIG_IGN);
  const auto outcome =
      tune::run_tune(o, std::filesystem::read_symlink("/proc/self/exe").string(), quick_profile_in_process);
  exit_status() = outcome.exit_code;
}

}  // namespace

void add_tune_command(CLI::App& app) {
  auto cmd = std::make_shared<TuneCommand>();
  auto& o = cmd->options;
  auto* sub = app.add_subcommand("tune", "Profile, plan, train at the chosen configuration, re-plan, report the bill");
  sub->add_option("--model", cmd->model, "Model from `tula models` (default small_cnn)");
  sub->add_option("--dataset", cmd->dataset, "fashion-mnist, mnist, cifar10 or cifar100 (default fashion-mnist)");
  sub->add_option("--data-dir", o.data_dir, "Directory of the data set's files (default: its usual place)");
  sub->add_option("--target-accuracy", o.target_accuracy,
                  "Train until the accuracy on the validation split (--validation-size; 0: the test split) reaches "
                  "this (0-1)");
  sub->add_option("--epochs", o.epochs, "Or train for this many epochs");
  sub->add_option("--objective", o.objective, "knee, fastest, cheapest, deadline=H (hours) or budget=USD")->capture_default_str();
  sub->add_option("--resources", o.resources, "local (this machine) or a catalog JSON of machine types")->capture_default_str();
  sub->add_option("--device", o.device, "cpu, cuda or auto (CUDA where a GPU is visible): where it profiles and trains")
      ->capture_default_str();
  sub->add_option("--backend", o.backend,
                  "Where workers run: local, slurm, or emulated (the nodes of scripts/emulated-cluster)")
      ->capture_default_str();
  sub->add_option("--cluster-state", o.cluster_state,
                  "With --backend emulated: the cluster's state file (default /run/tula-emu/state.json)");
  sub->add_option("--out", o.out_dir, "The job's directory: profile, checkpoints, metrics, report");
  sub->add_option("--resume", cmd->resume_dir, "Continue the job in this directory");
  sub->add_option("--data-root", o.data_roots,
                  "Every path given (--data-dir, --profile, --resources) must resolve under one of these directories, "
                  "checked again as it is opened (repeatable; `tula serve` gives its own)");

  sub->add_option("--optimizer", o.optimizer, "ags (default), sgd, lars or lamb")->capture_default_str();
  sub->add_option("--lr", o.lr, "Learning rate at --reference-batch")->capture_default_str();
  sub->add_option("--reference-batch", o.reference_batch, "Global batch at which --lr was tuned")->capture_default_str();
  sub->add_option("--lr-scaling", o.lr_scaling, "none (AGS scales itself), linear or sqrt")->capture_default_str();
  sub->add_option("--momentum", o.momentum, "Momentum")->capture_default_str();
  sub->add_option("--weight-decay", o.weight_decay, "Weight decay")->capture_default_str();
  sub->add_option("--warmup-epochs", o.warmup_epochs,
                  "Linear warmup epochs of a launch whose global batch is above --reference-batch")
      ->capture_default_str();
  sub->add_flag("--warmup-at-reference", o.warmup_at_reference,
                "Warm up launches at or below --reference-batch too (the rate there is the tuned one)");
  sub->add_option("--seed", o.seed, "Seed of weights and sample order")->capture_default_str();

  sub->add_option("--profile", o.profile_path, "Reuse this profile (measured on this hardware) instead of profiling");
  sub->add_option("--profile-budget", o.profile_budget_s, "Seconds the quick profile may take")->capture_default_str();
  sub->add_option("--pilot-steps", o.pilot_steps, "Steps of the pilot segment (0: none); up to the first evaluation when that is within 1.5x")->capture_default_str();
  sub->add_option("--pilot-workers", o.pilot_workers,
                  "Workers of the pilot (0: by the objective: where the backend places nodes, the layout it picks at "
                  "--reference-batch; else one, at the default layout, two for --objective fastest)")
      ->capture_default_str();
  sub->add_option("--pilot-batch", o.pilot_batch,
                  "Per-worker batch of the pilot (0: --reference-batch over the pilot's workers)")
      ->capture_default_str();
  sub->add_option("--price-per-hour", o.local_price_per_hour, "Price of this machine per hour, with --resources local")->capture_default_str();

  sub->add_option("--watch-every", o.watch_every_steps, "Compare with the plan and re-plan every this many steps")->capture_default_str();
  sub->add_option("--watch-every-seconds", o.watch_every_s, "... or every this many seconds")->capture_default_str();
  sub->add_option("--synthetic-size", o.synthetic_size, "With --dataset synthetic (timing only): training samples");
  sub->add_option("--image-size", o.image_size, "With --dataset imagefolder: the side images are decoded to (0: 224)");
  sub->add_option("--eval-crop", o.eval_crop,
                  "With --dataset imagefolder: the evaluation's centre crop (1: the whole image; 0.875: ImageNet's)")
      ->capture_default_str();
  sub->add_option("--eval-every-epochs", o.eval_every_epochs, "Evaluate every this many epochs (and at each epoch's end)")
      ->capture_default_str();
  sub->add_option("--eval-average", o.eval_average,
                  "Evaluate a moving average of the weights with this decay (tula train --eval-average); 0: the "
                  "weights themselves")
      ->capture_default_str();
  sub->add_option("--validation-size", o.validation_size,
                  "Training samples held out for the accuracy curve and the target (-1: a tenth, at most 5000; 0: "
                  "the test split); the test split is then evaluated once, at the end")
      ->capture_default_str();
  sub->add_option("--min-saving", o.min_saving, "Resize (also from the pilot to the plan's choice) only for a predicted saving above this share of what is left")->capture_default_str();
  sub->add_option("--restart-cost", o.restart_cost_s, "Seconds a resize is assumed to cost until one is measured")->capture_default_str();
  sub->add_flag("--no-replan", cmd->no_replan, "Train at the first choice throughout");
  sub->add_flag("!--no-augment", o.augment, "Train without augmentation (random crop and flip, RandomResizedCrop)");
  sub->add_flag("--no-noise-growth", cmd->no_noise_growth,
                "Plan with the pilot's gradient noise scale as read, not grown over the job");
  sub->add_flag("--no-epochs-floor", cmd->no_epochs_floor,
                "Let batches below --reference-batch need fewer epochs, as the noise-scale law says for a rate tuned "
                "at each batch");
  sub->add_flag("--loss-forecast,!--no-loss-forecast", o.loss_forecast,
                "Forecast the target from the training loss too and plan with the geometric mean of the two "
                "forecasts (default: the evaluations alone)");
  sub->add_flag("--no-profile-cache", cmd->no_profile_cache,
                "Measure a new quick profile instead of the cached one of this model, input and machine");
  auto* history = sub->add_option("--history", o.history_path,
                                  "Earlier jobs' epochs to their targets, this job's prior (default: job-history.jsonl "
                                  "beside the profile cache); a job that reaches its target adds its own");
  sub->add_flag("--no-history", cmd->no_history,
                "Plan with the stated prior (E_min 2 epochs) and leave no line in the history")
      ->excludes(history);
  sub->add_flag("--forecast-alone", cmd->forecast_alone,
                "Take the target's crossing from the forecast alone once there is one, not weighed with the prior");
  sub->add_flag("--no-exponent-prior", cmd->no_exponent_prior,
                "Fit the forecast's power law to the evaluations alone (from two on), without the prior on its "
                "exponent that lets the pilot's one evaluation forecast");
  sub->add_option("--max-epochs", o.max_epochs, "Give the target up past this many epochs")->capture_default_str();
  sub->add_option("--give-up-after", o.give_up_after,
                  "Never judge the target out of reach before this share of --max-epochs is done")
      ->capture_default_str();
  sub->add_option("--on-out-of-reach", o.on_out_of_reach,
                  "stop, or continue: write the verdict in the report and train on (to check it)")
      ->capture_default_str();
  sub->add_option("--max-retries", o.max_retries, "Relaunches from the checkpoint after a worker dies")->capture_default_str();
  sub->add_option("--start-at", o.start_at, "Start at WORKERSxBATCH[xACCUMULATION] instead of the plan's choice");
  sub->add_option("--start-on", o.start_on,
                  "With --start-at: on TYPE[:NODES] of the --resources catalog (default: its first type, 1 node)");
  sub->add_option("--then-at", o.then_at,
                  "With --start-at: move to WORKERSxBATCH[xACCUMULATION] once EPOCHS are done (EPOCHS:WxB, e.g. 0.5:2x128)");
  sub->add_option("--then-on", o.then_on, "With --then-at: on TYPE[:NODES] (default: where --start-at runs)");
  sub->add_option("--progress", o.progress, "auto, bar, lines or none")->capture_default_str();
  sub->callback([cmd] { run(*cmd); });
}

}  // namespace tula::cli
